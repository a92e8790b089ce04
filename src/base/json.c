/*-------------------------------------------------------------------------
 *
 * json.c
 *	  Building jsonb values (event attributes, tasks) and reading their fields.
 *
 * The builder writes JSON text into a StringInfo and parses it once at the
 * end, which is simpler than pushing JsonbValues and fast enough for the few
 * keys an event has.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "catalog/pg_type.h"
#include "utils/date.h"
#include "utils/datetime.h"
#include "utils/float.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "base/json.h"

/* Start a builder with an open top-level object. */
void
JsonBegin(JsonBuilder *jb)
{
	initStringInfo(&jb->buf);
	appendStringInfoChar(&jb->buf, '{');
	jb->depth = 0;
	jb->need_comma[0] = false;
}

/* Write the separator and, inside an object, the key. */
void
JsonKey(JsonBuilder *jb, const char *key)
{
	if (jb->need_comma[jb->depth])
		appendStringInfoChar(&jb->buf, ',');
	jb->need_comma[jb->depth] = true;
	if (key != NULL)
	{
		escape_json(&jb->buf, key);
		appendStringInfoChar(&jb->buf, ':');
	}
}

/* A string value; NULL writes null. */
void
JsonAddText(JsonBuilder *jb, const char *key, const char *value)
{
	JsonKey(jb, key);
	if (value == NULL)
		appendStringInfoString(&jb->buf, "null");
	else
		escape_json(&jb->buf, value);
}

void
JsonAddInt(JsonBuilder *jb, const char *key, int64 value)
{
	JsonKey(jb, key);
	appendStringInfo(&jb->buf, INT64_FORMAT, value);
}

/* A number of seconds or a coefficient, in its shortest exact form. */
void
JsonAddFloat(JsonBuilder *jb, const char *key, double value)
{
	JsonKey(jb, key);
	if (isnan(value) || isinf(value))
		appendStringInfoString(&jb->buf, "null");
	else
		appendStringInfoString(&jb->buf, float8out_internal(value));
}

void
JsonAddBool(JsonBuilder *jb, const char *key, bool value)
{
	JsonKey(jb, key);
	appendStringInfoString(&jb->buf, value ? "true" : "false");
}

void
JsonAddNull(JsonBuilder *jb, const char *key)
{
	JsonKey(jb, key);
	appendStringInfoString(&jb->buf, "null");
}

/* An embedded jsonb value (payloads); NULL writes null. */
void
JsonAddJsonb(JsonBuilder *jb, const char *key, Jsonb *value)
{
	JsonKey(jb, key);
	if (value == NULL)
		appendStringInfoString(&jb->buf, "null");
	else
		(void) JsonbToCString(&jb->buf, &value->root, VARSIZE(value));
}

/* A timestamp, written as to_jsonb() writes one. */
void
JsonAddTimestamp(JsonBuilder *jb, const char *key, TimestampTz value)
{
	char		buf[MAXDATELEN + 1];

	JsonKey(jb, key);
	JsonEncodeDateTime(buf, TimestampTzGetDatum(value), TIMESTAMPTZOID, NULL);
	escape_json(&jb->buf, buf);
}

void
JsonBeginObject(JsonBuilder *jb, const char *key)
{
	JsonKey(jb, key);
	appendStringInfoChar(&jb->buf, '{');
	if (jb->depth + 1 >= lengthof(jb->need_comma))
		elog(ERROR, "JSON builder nested too deeply");
	jb->need_comma[++jb->depth] = false;
}

void
JsonEndObject(JsonBuilder *jb)
{
	appendStringInfoChar(&jb->buf, '}');
	jb->depth--;
}

void
JsonBeginArray(JsonBuilder *jb, const char *key)
{
	JsonKey(jb, key);
	appendStringInfoChar(&jb->buf, '[');
	if (jb->depth + 1 >= lengthof(jb->need_comma))
		elog(ERROR, "JSON builder nested too deeply");
	jb->need_comma[++jb->depth] = false;
}

void
JsonEndArray(JsonBuilder *jb)
{
	appendStringInfoChar(&jb->buf, ']');
	jb->depth--;
}

/* Close the top-level object and parse it into a jsonb value. */
Jsonb *
JsonFinish(JsonBuilder *jb)
{
	Jsonb	   *result;

	Assert(jb->depth == 0);
	appendStringInfoChar(&jb->buf, '}');
	result = DatumGetJsonbP(DirectFunctionCall1(jsonb_in,
												CStringGetDatum(jb->buf.data)));
	pfree(jb->buf.data);
	return result;
}

/* The value of key in a jsonb object, or NULL when absent or not an object. */
JsonbValue *
JsonGetField(Jsonb *obj, const char *key)
{
	if (obj == NULL || !JB_ROOT_IS_OBJECT(obj))
		return NULL;
	return getKeyJsonValueFromContainer(&obj->root, key, strlen(key), NULL);
}

/* A JSON array of the values, NULL ones left out, built without text. */
Jsonb *
JsonbArray(Jsonb **items, int n)
{
	JsonbParseState *st = NULL;
	JsonbValue *res;
	int			i;

	(void) pushJsonbValue(&st, WJB_BEGIN_ARRAY, NULL);
	for (i = 0; i < n; i++)
	{
		JsonbValue	v;

		if (items[i] == NULL)
			continue;
		v.type = jbvBinary;
		v.val.binary.data = &items[i]->root;
		v.val.binary.len = VARSIZE(items[i]) - VARHDRSZ;
		(void) pushJsonbValue(&st, WJB_ELEM, &v);
	}
	res = pushJsonbValue(&st, WJB_END_ARRAY, NULL);
	return JsonbValueToJsonb(res);
}

/* obj with the fields of another object set (obj || fields). */
Jsonb *
JsonbMerge(Jsonb *obj, Jsonb *fields)
{
	return DatumGetJsonbP(DirectFunctionCall2(jsonb_concat,
											  JsonbPGetDatum(obj),
											  JsonbPGetDatum(fields)));
}

/* obj with key set to an integer (obj || {key: value}). */
Jsonb *
JsonbSetInt(Jsonb *obj, const char *key, int64 value)
{
	JsonBuilder jb;

	JsonBegin(&jb);
	JsonAddInt(&jb, key, value);
	return JsonbMerge(obj, JsonFinish(&jb));
}

/* Push a key of an object being built. */
void
JsonbPushKey(JsonbParseState **st, const char *key)
{
	JsonbValue	v;

	v.type = jbvString;
	v.val.string.val = (char *) key;
	v.val.string.len = strlen(key);
	(void) pushJsonbValue(st, WJB_KEY, &v);
}

/* Push a string value (kept by reference: it must outlive the builder). */
void
JsonbPushString(JsonbParseState **st, const char *key, const char *value)
{
	JsonbValue	v;

	JsonbPushKey(st, key);
	v.type = jbvString;
	v.val.string.val = (char *) value;
	v.val.string.len = strlen(value);
	(void) pushJsonbValue(st, WJB_VALUE, &v);
}

/* Push an integer value, a numeric as jsonb_build_object makes of int4/int8. */
void
JsonbPushInt(JsonbParseState **st, const char *key, int64 value)
{
	JsonbValue	v;

	JsonbPushKey(st, key);
	v.type = jbvNumeric;
	v.val.numeric = int64_to_numeric(value);
	(void) pushJsonbValue(st, WJB_VALUE, &v);
}
