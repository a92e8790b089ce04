/*-------------------------------------------------------------------------
 *
 * json.c
 *	  Building jsonb values (event attributes, tasks) and reading their fields.
 *
 * The builder pushes JsonbValues (no JSON text is written and parsed again:
 * an event's payload, often the largest part of it, is copied once).
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

/*
 * A string value of the builder: copied, as the value pushed keeps only a
 * pointer to it until JsonFinish, and callers pass strings of any lifetime.
 */
static void
set_string(JsonbValue *v, const char *str, int len)
{
	v->type = jbvString;
	v->val.string.val = pnstrdup(str, len);
	v->val.string.len = len;
}

/* Push a value: an object's (after its key) or an array's element. */
static void
push_value(JsonBuilder *jb, JsonbValue *v)
{
	(void) pushJsonbValue(&jb->state,
						  jb->in_array[jb->depth] ? WJB_ELEM : WJB_VALUE, v);
}

/* Start a builder with an open top-level object. */
void
JsonBegin(JsonBuilder *jb)
{
	jb->state = NULL;
	(void) pushJsonbValue(&jb->state, WJB_BEGIN_OBJECT, NULL);
	jb->depth = 0;
	jb->in_array[0] = false;
}

/* Inside an object, push the key of the next value (NULL in an array). */
void
JsonKey(JsonBuilder *jb, const char *key)
{
	JsonbValue	v;

	if (key == NULL || jb->in_array[jb->depth])
		return;
	set_string(&v, key, strlen(key));
	(void) pushJsonbValue(&jb->state, WJB_KEY, &v);
}

/* A string value; NULL writes null. */
void
JsonAddText(JsonBuilder *jb, const char *key, const char *value)
{
	JsonbValue	v;

	JsonKey(jb, key);
	if (value == NULL)
		v.type = jbvNull;
	else
		set_string(&v, value, strlen(value));
	push_value(jb, &v);
}

void
JsonAddInt(JsonBuilder *jb, const char *key, int64 value)
{
	JsonbValue	v;

	JsonKey(jb, key);
	v.type = jbvNumeric;
	v.val.numeric = int64_to_numeric(value);
	push_value(jb, &v);
}

/*
 * A number of seconds or a coefficient, in its shortest exact form: the
 * numeric that its shortest text (float8out) reads as, as jsonb_in would
 * read it.
 */
void
JsonAddFloat(JsonBuilder *jb, const char *key, double value)
{
	JsonbValue	v;

	JsonKey(jb, key);
	if (isnan(value) || isinf(value))
		v.type = jbvNull;
	else
	{
		v.type = jbvNumeric;
		v.val.numeric =
			DatumGetNumeric(DirectFunctionCall3(numeric_in,
												CStringGetDatum(float8out_internal(value)),
												ObjectIdGetDatum(InvalidOid),
												Int32GetDatum(-1)));
	}
	push_value(jb, &v);
}

void
JsonAddBool(JsonBuilder *jb, const char *key, bool value)
{
	JsonbValue	v;

	JsonKey(jb, key);
	v.type = jbvBool;
	v.val.boolean = value;
	push_value(jb, &v);
}

void
JsonAddNull(JsonBuilder *jb, const char *key)
{
	JsonbValue	v;

	JsonKey(jb, key);
	v.type = jbvNull;
	push_value(jb, &v);
}

/*
 * An embedded jsonb value (payloads); NULL writes null.  Its scalars are
 * copied as they are pushed: a value read from a table may live in a buffer
 * or an SPI result that goes away before JsonFinish.
 */
void
JsonAddJsonb(JsonBuilder *jb, const char *key, Jsonb *value)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;

	JsonKey(jb, key);
	if (value == NULL)
	{
		v.type = jbvNull;
		push_value(jb, &v);
		return;
	}
	it = JsonbIteratorInit(&value->root);
	if (JB_ROOT_IS_SCALAR(value))
	{
		/* [scalar] as stored: the scalar alone */
		(void) JsonbIteratorNext(&it, &v, false);	/* WJB_BEGIN_ARRAY */
		(void) JsonbIteratorNext(&it, &v, false);	/* WJB_ELEM */
		if (v.type == jbvString)
			set_string(&v, v.val.string.val, v.val.string.len);
		else if (v.type == jbvNumeric)
			v.val.numeric = DatumGetNumericCopy(NumericGetDatum(v.val.numeric));
		push_value(jb, &v);
		return;
	}
	while ((tok = JsonbIteratorNext(&it, &v, false)) != WJB_DONE)
	{
		if (tok == WJB_KEY || tok == WJB_VALUE || tok == WJB_ELEM)
		{
			if (v.type == jbvString)
				set_string(&v, v.val.string.val, v.val.string.len);
			else if (v.type == jbvNumeric)
				v.val.numeric = DatumGetNumericCopy(NumericGetDatum(v.val.numeric));
			(void) pushJsonbValue(&jb->state, tok, &v);
		}
		else
			(void) pushJsonbValue(&jb->state, tok, NULL);
	}
}

/* A timestamp, written as to_jsonb() writes one. */
void
JsonAddTimestamp(JsonBuilder *jb, const char *key, TimestampTz value)
{
	char		buf[MAXDATELEN + 1];
	JsonbValue	v;

	JsonKey(jb, key);
	JsonEncodeDateTime(buf, TimestampTzGetDatum(value), TIMESTAMPTZOID, NULL);
	set_string(&v, buf, strlen(buf));
	push_value(jb, &v);
}

void
JsonBeginObject(JsonBuilder *jb, const char *key)
{
	JsonKey(jb, key);
	if (jb->depth + 1 >= lengthof(jb->in_array))
		elog(ERROR, "JSON builder nested too deeply");
	(void) pushJsonbValue(&jb->state, WJB_BEGIN_OBJECT, NULL);
	jb->in_array[++jb->depth] = false;
}

void
JsonEndObject(JsonBuilder *jb)
{
	(void) pushJsonbValue(&jb->state, WJB_END_OBJECT, NULL);
	jb->depth--;
}

void
JsonBeginArray(JsonBuilder *jb, const char *key)
{
	JsonKey(jb, key);
	if (jb->depth + 1 >= lengthof(jb->in_array))
		elog(ERROR, "JSON builder nested too deeply");
	(void) pushJsonbValue(&jb->state, WJB_BEGIN_ARRAY, NULL);
	jb->in_array[++jb->depth] = true;
}

void
JsonEndArray(JsonBuilder *jb)
{
	(void) pushJsonbValue(&jb->state, WJB_END_ARRAY, NULL);
	jb->depth--;
}

/* Close the top-level object: the jsonb value built. */
Jsonb *
JsonFinish(JsonBuilder *jb)
{
	JsonbValue *res;

	Assert(jb->depth == 0);
	res = pushJsonbValue(&jb->state, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(res);
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
