/*-------------------------------------------------------------------------
 *
 * children.h
 *	  Child workflows, external signals and cancels, parent close policies (children.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_ENGINE_CHILDREN_H
#define DURABLE_ENGINE_CHILDREN_H

#include "engine/runs.h"

typedef enum ParentClosePolicy
{
	PARENT_CLOSE_TERMINATE,
	PARENT_CLOSE_REQUEST_CANCEL,
	PARENT_CLOSE_ABANDON
} ParentClosePolicy;

typedef struct ExternalRequest
{
	bool		cancel;			/* RequestCancel..., else Signal... */
	char	   *namespace;
	char	   *workflow_id;
	pg_uuid_t  *run_id;			/* NULL: the latest run */
	char	   *signal_name;
	Jsonb	   *input;
	Jsonb	   *control;
	bool		child_workflow_only;
} ExternalRequest;

struct StartRequest;

extern ParentClosePolicy ParseParentClosePolicy(const char *name,
												const char *argname);
extern const char *ParentClosePolicyName(ParentClosePolicy p);
extern void StartChildWorkflow(RunState *rs, TimestampTz now,
							   struct StartRequest *req,
							   ParentClosePolicy policy, Jsonb *control,
							   int64 completed_id);
extern void RequestExternal(RunState *rs, TimestampTz now,
							ExternalRequest *req, int64 completed_id);
extern bool FireDeliverTimer(RunState *rs, int64 ref_id, Jsonb *payload,
							 TimestampTz now);
extern bool FireExternalTimer(pg_uuid_t *run_id, int64 ref_id, Jsonb *payload,
							  TimestampTz now);
extern Jsonb *ReceiveExternal(Jsonb *request, TimestampTz now);
extern bool FireClosePolicyTimer(pg_uuid_t *run_id, int64 ref_id,
								 Jsonb *payload, TimestampTz now);

#endif							/* DURABLE_ENGINE_CHILDREN_H */
