/*-------------------------------------------------------------------------
 *
 * registry.h
 *	  Workflow and activity types run by the executors (registry.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_STORE_REGISTRY_H
#define DURABLE_STORE_REGISTRY_H

typedef struct Registration
{
	Oid			function;
	Oid			run_as;
} Registration;

extern bool LookupRegistration(char kind, const char *namespace,
							   const char *type_name, const char *task_queue,
							   Registration *out);
extern void CheckFunctionSignature(Oid function);

#endif							/* DURABLE_STORE_REGISTRY_H */
