/*-------------------------------------------------------------------------
 *
 * replace_guard.h
 *	  CREATE OR REPLACE and DROP of functions that running SQL workflows use
 *	  (replace_guard.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_SQLWF_REPLACE_GUARD_H
#define DURABLE_SQLWF_REPLACE_GUARD_H

#include "nodes/parsenodes.h"

/* durable.replay_check_on_replace */
typedef enum ReplaceCheck
{
	REPLACE_CHECK_OFF,
	REPLACE_CHECK_WARNING,
	REPLACE_CHECK_ERROR
} ReplaceCheck;
extern int	durable_replay_check_on_replace;

extern void ReplaceGuardAfterCreate(CreateFunctionStmt *stmt);
extern List *ReplaceGuardBeforeDrop(DropStmt *stmt);
extern void ReplaceGuardAfterDrop(List *pending);

#endif							/* DURABLE_SQLWF_REPLACE_GUARD_H */
