/*-------------------------------------------------------------------------
 *
 * usercode.h
 *	  Running user code as its role, and logging its failures (usercode.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_SQLWF_USERCODE_H
#define DURABLE_SQLWF_USERCODE_H

#include "fmgr.h"
#include "engine/runs.h"

extern void CallAsRole(Oid role, FmgrInfo *flinfo, Jsonb *input,
					   double timeout_seconds, bool (*keep) (void *),
					   void *keep_arg, Jsonb **result, ErrorData **error,
					   bool *timed_out);
extern void LogUserCodeFailure(const char *what, const char *type_name,
							   RunState *rs, const char *where, Oid run_as,
							   const char *reason, const char *message,
							   const char *detail);
extern void SetUserCodeLockTimeout(const char *value);

#endif							/* DURABLE_SQLWF_USERCODE_H */
