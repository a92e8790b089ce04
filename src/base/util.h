/*-------------------------------------------------------------------------
 *
 * util.h
 *	  Argument checks, uuids, durations, errors (util.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_BASE_UTIL_H
#define DURABLE_BASE_UTIL_H

#include "access/tupdesc.h"
#include "nodes/pg_list.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"
#include "durable.h"

/* Whether the library came from shared_preload_libraries */
extern bool durable_library_preloaded;

/* durable.max_payload_size */
extern int	durable_max_payload_size;

extern char *CheckName(text *value, const char *argname);
extern char *CheckOptionalName(text *value, const char *argname);
extern char *CheckConcurrencyKey(const char *key, const char *argname);
extern int	CheckPriority(int64 value, const char *argname);
extern void CheckPayload(Jsonb *value, const char *argname);
extern void CheckObject(Jsonb *value, const char *argname);
extern double IntervalToSeconds(Interval *value, const char *argname,
								bool allow_zero);
extern double CheckSeconds(double seconds, const char *argname,
						   bool allow_zero);
extern double NumericToDouble(Numeric value);
extern TimestampTz TimestampPlusSeconds(TimestampTz t, double seconds);
extern double TimestampDiffSeconds(TimestampTz later, TimestampTz earlier);
extern int	TupleDescColumnIndex(TupleDesc desc, const char *name);
extern pg_uuid_t *NewRandomUuid(void);
extern pg_uuid_t *NewTimeOrderedUuid(void);
extern int64 NewTaskSecret(void);
extern bool TaskSecretsStored(void);
extern Oid	DurableRelationOid(const char *relname);
extern bool IsDurableTable(Oid relid, const char *name);
extern uint64 QueueNameHash(const char *namespace, const char *task_queue);
extern bool DurableColumnExists(const char *relname, const char *column);
extern int	DurableExtensionVersion(Oid *owner);
extern bool DurableLockExtension(void);
extern char *UuidToCString(const pg_uuid_t *uuid);
extern bool ParseCanonicalUuid(const char *s, pg_uuid_t *out);
extern bool ErrorIsCancel(ErrorData *edata);
extern bool ErrorIsTransient(ErrorData *edata);
extern ErrorData *RunInSubtransaction(void (*fn) (void *arg), void *arg);

#endif							/* DURABLE_BASE_UTIL_H */
