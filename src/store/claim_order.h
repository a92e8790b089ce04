/*-------------------------------------------------------------------------
 *
 * claim_order.h
 *	  Where the round robin of a queue's concurrency keys stands
 *	  (claim_order.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_STORE_CLAIM_ORDER_H
#define DURABLE_STORE_CLAIM_ORDER_H

#include "durable.h"

/* The bytes of a concurrency key, with its terminator */
#define CLAIM_KEY_MAX	(DURABLE_MAX_KEY_LEN + 1)

extern Size ClaimOrderShmemSize(void);
extern void ClaimOrderShmemInit(void);
extern bool ClaimOrderGet(const char *namespace, const char *task_queue,
						  char kind, int priority, char *key, int32 *served);
extern void ClaimOrderServed(const char *namespace, const char *task_queue,
							 char kind, int priority, const char *key,
							 int32 served);
extern void ClaimOrderForget(const char *namespace, const char *task_queue,
							 char kind, int priority);

#endif							/* DURABLE_STORE_CLAIM_ORDER_H */
