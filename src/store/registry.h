/*-------------------------------------------------------------------------
 *
 * registry.h
 *	  Workflow and activity types run by the executors (registry.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_STORE_REGISTRY_H
#define DURABLE_STORE_REGISTRY_H

#include "nodes/pg_list.h"

typedef struct Registration
{
	Oid			function;
	Oid			run_as;
} Registration;

extern bool LookupRegistration(char kind, const char *namespace,
							   const char *type_name, const char *task_queue,
							   Registration *out);
extern void CheckFunctionSignature(Oid function);
extern bool IsWorkflowSignature(Oid function);

/* A workflow type's registration on a task queue (WorkflowRegistrationsOf) */
typedef struct RegisteredWorkflow
{
	char	   *namespace;
	char	   *type_name;
	char	   *task_queue;
	Oid			run_as;
} RegisteredWorkflow;

extern List *WorkflowRegistrationsOf(Oid function);

#endif							/* DURABLE_STORE_REGISTRY_H */
