/*-------------------------------------------------------------------------
 *
 * pause.h
 *	  Pausing and resuming a workflow run (pause.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_ENGINE_PAUSE_H
#define DURABLE_ENGINE_PAUSE_H

#include "utils/timestamp.h"
#include "engine/runs.h"

extern bool PauseRun(RunState *rs, TimestampTz now, const char *who,
					 const char *reason);
extern bool ResumeRun(RunState *rs);

#endif							/* DURABLE_ENGINE_PAUSE_H */
