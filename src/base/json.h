/*-------------------------------------------------------------------------
 *
 * json.h
 *	  Building jsonb values and reading fields of them (json.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_BASE_JSON_H
#define DURABLE_BASE_JSON_H

#include "lib/stringinfo.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"

typedef struct JsonBuilder
{
	JsonbParseState *state;
	int			depth;			/* 0: the top-level object */
	bool		in_array[16];	/* the container at each depth is an array */
} JsonBuilder;

extern void JsonBegin(JsonBuilder *jb);
extern void JsonKey(JsonBuilder *jb, const char *key);
extern void JsonAddText(JsonBuilder *jb, const char *key, const char *value);
extern void JsonAddInt(JsonBuilder *jb, const char *key, int64 value);
extern void JsonAddFloat(JsonBuilder *jb, const char *key, double value);
extern void JsonAddBool(JsonBuilder *jb, const char *key, bool value);
extern void JsonAddNull(JsonBuilder *jb, const char *key);
extern void JsonAddJsonb(JsonBuilder *jb, const char *key, Jsonb *value);
extern void JsonAddTimestamp(JsonBuilder *jb, const char *key, TimestampTz value);
extern void JsonBeginObject(JsonBuilder *jb, const char *key);
extern void JsonEndObject(JsonBuilder *jb);
extern void JsonBeginArray(JsonBuilder *jb, const char *key);
extern void JsonEndArray(JsonBuilder *jb);
extern Jsonb *JsonFinish(JsonBuilder *jb);

extern JsonbValue *JsonGetField(Jsonb *obj, const char *key);
extern Jsonb *JsonbMerge(Jsonb *obj, Jsonb *fields);
extern Jsonb *JsonbSetInt(Jsonb *obj, const char *key, int64 value);
extern Jsonb *JsonbArray(Jsonb **items, int n);

/* Pushing into a JsonbParseState (values kept by reference) */
extern void JsonbPushKey(JsonbParseState **st, const char *key);
extern void JsonbPushString(JsonbParseState **st, const char *key,
							const char *value);
extern void JsonbPushInt(JsonbParseState **st, const char *key, int64 value);

#endif							/* DURABLE_BASE_JSON_H */
