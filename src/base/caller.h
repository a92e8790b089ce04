/*-------------------------------------------------------------------------
 *
 * caller.h
 *	  Who calls the API: the current user at the call (caller.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_BASE_CALLER_H
#define DURABLE_BASE_CALLER_H

/*
 * The role whose user code the executor runs (CallAsRole), InvalidOid
 * otherwise.
 */
extern Oid	durable_user_code_role;

extern void InstallCallerHook(void);
extern Oid	DurableCaller(void);
extern const char *CallerIdentity(void);

#endif							/* DURABLE_BASE_CALLER_H */
