/*-------------------------------------------------------------------------
 *
 * router.h
 *	  The router of a node that shares its workflows with other nodes, and
 *	  the signal and cancel requests received from them (router.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_STORE_ROUTER_H
#define DURABLE_STORE_ROUTER_H

#include "datatype/timestamp.h"
#include "utils/jsonb.h"
#include "utils/uuid.h"

extern bool RouterPresent(void);
extern bool RouterOwnedElsewhere(const char *namespace, const char *workflow_id);
extern Jsonb *RouterRelay(Jsonb *request);
extern bool ReceivedRequestTarget(pg_uuid_t *initiator_run_id,
								  int64 initiated_event_id,
								  pg_uuid_t *target_run_id);
extern void NoteReceivedRequest(pg_uuid_t *initiator_run_id,
								int64 initiated_event_id,
								pg_uuid_t *target_run_id, TimestampTz now);
extern bool ReceivedRequestsTableExists(void);

#endif							/* DURABLE_STORE_ROUTER_H */
