#!/usr/bin/env python3
"""bench/extract_plans.py: the psql script that EXPLAINs every kept plan of src/**/*.c.

Usage: python3 bench/extract_plans.py [SRC_DIR] > plans.sql      (SRC_DIR: src/)
       python3 bench/extract_plans.py --list [SRC_DIR]          (names and SQL only)

It parses every `[static] KeptPlan NAME = { NULL, <SQL>, NARGS, {TYPE OIDs} };` of
SRC_DIR/*.c, rebuilds the SQL text the C compiler would build (adjacent string
literals concatenated, escapes decoded, the #define macros of the file and of
SRC_DIR/*.h expanded, function-like ones included) and writes, for each plan:

    PREPARE <file>_<name>(<types>) AS <sql>;
    EXPLAIN (ANALYZE, BUFFERS, SUMMARY OFF) EXECUTE <file>_<name>(<values>);

under SET plan_cache_mode = force_generic_plan (spi.c prepares every kept plan with
CURSOR_OPT_GENERIC_PLAN: the generic plan is the one the engine runs).  Statements
that write or lock rows run inside BEGIN ... ROLLBACK.

The values come from DEFAULTS (one per SQL type) overlaid with OVERRIDES (per plan
and parameter), written as psql expressions: :'run', :act_sched and the other
variables are set by bench/explain.sql from real rows before it \\i's the output.

Anything it does not understand (an unknown macro or type OID, a plan it cannot
parse, an argument count that does not match, an override naming a plan or a
parameter that no longer exists) makes it exit 1 naming the file and the plan: the
EXPLAIN must follow the sources or fail, never drift.
"""

import os
import re
import sys

# Type OID macros (catalog/pg_type_d.h) -> the SQL type of the PREPARE.
TYPES = {
    "TEXTOID": "text",
    "VARCHAROID": "varchar",
    "NAMEOID": "name",
    "UUIDOID": "uuid",
    "INT2OID": "int2",
    "INT4OID": "int4",
    "INT8OID": "int8",
    "BOOLOID": "bool",
    "FLOAT4OID": "float4",
    "FLOAT8OID": "float8",
    "NUMERICOID": "numeric",
    "CHAROID": '"char"',
    "TIMESTAMPTZOID": "timestamptz",
    "TIMESTAMPOID": "timestamp",
    "INTERVALOID": "interval",
    "JSONBOID": "jsonb",
    "JSONOID": "json",
    "BYTEAOID": "bytea",
    "OIDOID": "oid",
    "REGPROCEDUREOID": "regprocedure",
    "REGROLEOID": "regrole",
    "CHARARRAYOID": '"char"[]',
    "TEXTARRAYOID": "text[]",
    "INT2ARRAYOID": "int2[]",
    "INT4ARRAYOID": "int4[]",
    "INT8ARRAYOID": "int8[]",
    "BOOLARRAYOID": "bool[]",
    "FLOAT8ARRAYOID": "float8[]",
    "UUIDARRAYOID": "uuid[]",
    "TIMESTAMPTZARRAYOID": "timestamptz[]",
    "JSONBARRAYOID": "jsonb[]",
    "INTERVALARRAYOID": "interval[]",
}

# A sample value for each SQL type, as a psql expression, used where OVERRIDES
# says nothing.  :'run' is a running run with a started activity (explain.sql).
DEFAULTS = {
    "text": "'default'",
    "varchar": "'default'",
    "name": "'default'",
    "uuid": ":'run'",
    "int2": "1",
    "int4": "1",
    "int8": "1",
    "bool": "false",
    "float4": "10",
    "float8": "10",
    "numeric": "10",
    '"char"': "'d'",
    "timestamptz": "now()",
    "timestamp": "localtimestamp",
    "interval": "'7 days'",
    "jsonb": "'{}'",
    "json": "'{}'",
    "bytea": "''",
    "oid": "0",
    "text[]": "'{}'",
    "int2[]": "'{}'",
    "int4[]": "'{}'",
    "int8[]": "'{}'",
    "bool[]": "'{}'",
    "float8[]": "'{}'",
    "uuid[]": "'{}'",
    "timestamptz[]": "'{}'",
    "jsonb[]": "'{}'",
    "interval[]": "'{}'",
    '"char"[]': "'{w,x}'",
    "regprocedure": "'pg_catalog.now()'",
    "regrole": "'durable_admin'",
}

# Per-plan values: "<file>_<plan>" -> list of cases (label, {parameter number: psql
# expression}); parameters not named take DEFAULTS.  A plan absent here runs once
# with the defaults.  The psql variables are set by bench/explain.sql:
#   closed_run, closed_wid   a terminated run (of 100,000) and its workflow id
#   run, wid, next_event     a running run with a STARTED activity, its workflow id,
#                            its last_event_id + 1
#   act_sched, act_attempt   that activity's scheduled_event_id and attempt
#   sched_run, sched_act     a run whose activity is SCHEDULED, and its event id
#   started_run              a run with a started decision task and a buffered signal
#   timer_run, timer_id, timer_event   a pending user timer
#   t_run, t_kind, t_ref     the key of a pending durable.timers row
#   parent_run, child_init   a running parent and a pending child's initiated event
#   ready_run                a run with a task in durable.ready_tasks
#   done_run                 a run completed through the worker protocol
#   new_run                  a fresh uuid
#   batch                    a completed batch job
EVENTS = {  # two events and one decision task appended to :'run'
    "ids": "ARRAY[:next_event, :next_event + 1]::int8[]",
    "times": "ARRAY[now(), now()]",
    "types": "ARRAY['WorkflowExecutionSignaled', 'DecisionTaskScheduled']",
    "attrs": "ARRAY['{\"signalName\": \"ping\"}', '{}']::jsonb[]",
    "queues": "ARRAY['bulk']",
    "kinds": "ARRAY['d']",
    "sched": "ARRAY[:next_event + 1]::int8[]",
    "attempts": "ARRAY[1]",
}
OVERRIDES = {
    # batch.c: :'batch' is a completed job (explain.sql); each operation's call on a
    # run that it applies to (a running one; restart: a closed one)
    "batch_next_page": [(None, {1: ":'batch'", 2: "200"})],
    "batch_save_progress": [(None, {1: ":'batch'", 8: "false"})],
    "batch_save_error": [(None, {1: ":'batch'", 3: ":'wid'", 4: "'55P03'",
                                 5: "'explain'"})],
    "batch_op_terminate": [(None, {1: ":'wid'", 2: "'explain'", 3: "'default'",
                                   4: ":'run'"})],
    "batch_op_cancel": [(None, {1: ":'wid'", 2: "'explain'", 3: "'default'",
                                4: ":'run'"})],
    "batch_op_signal": [(None, {1: ":'wid'", 2: "'ping'", 3: "'{}'", 4: "'default'",
                                5: ":'run'"})],
    "batch_op_reset": [(None, {1: ":'wid'", 2: "'explain'", 3: "'default'",
                               4: ":'run'", 5: "NULL"})],
    "batch_op_restart": [(None, {1: ":'closed_wid'", 2: "'explain'", 3: "'default'",
                                 4: ":'closed_run'", 5: "NULL"})],
    # registry.c
    "registry_upsert_registration": [(None, {2: "'workflow'", 3: "'bench'"})],
    "registry_delete_registration": [(None, {2: "'workflow'", 3: "'bench'"})],
    # activities.c
    "activities_load_activity": [(None, {2: ":act_sched"})],
    "activities_take_activity": [(None, {2: ":act_sched"})],
    "activities_take_completed_activity": [(None, {2: ":act_sched", 3: ":act_attempt"})],
    "activities_load_activity_by_id": [(None, {2: "'a1'"})],
    "activities_insert_activity": [(None, {2: ":next_event", 4: ":'wid'", 5: "'a2'",
                                           6: "'noop'", 7: "'acts'", 9: "NULL",
                                           10: "NULL", 12: "NULL", 13: "NULL"})],
    "activities_save_activity": [(None, {2: ":act_sched", 3: "'STARTED'", 7: "NULL",
                                         8: "NULL", 9: "NULL", 10: "NULL",
                                         11: "NULL"})],
    "activities_delete_activity": [(None, {2: ":act_sched"})],
    "activities_disarm_timer": [(None, {2: ":act_sched"})],
    "activities_log_attempt": [(None, {2: ":act_sched", 3: ":act_attempt",
                                       4: "'a1'", 5: "'noop'", 6: "'explain'",
                                       10: "'failed'", 11: "'boom'", 12: "NULL",
                                       13: "NULL"})],
    # api_worker.c
    "worker_heartbeat_plan": [(None, {2: ":act_sched", 3: ":act_attempt"})],
    # children.c
    "children_insert_child": [(None, {1: ":'parent_run'", 2: "1000000", 4: "'explain-child'",
                                      5: ":'new_run'", 6: "'child'", 7: "'ABANDON'",
                                      8: "1000001"})],
    "children_take_child": [(None, {1: ":'parent_run'", 2: ":child_init"})],
    "children_take_children": [(None, {1: ":'parent_run'"})],
    # namespaces.c
    "namespaces_insert_namespace": [(None, {1: "'explain-ns'", 3: "NULL", 4: "''"})],
    "namespaces_update_namespace": [(None, {2: "NULL", 3: "NULL", 4: "'explained'"})],
    "namespaces_delete_namespace": [(None, {1: "'explain-ns'"})],
    "namespaces_insert_grant": [(None, {3: "'client'"})],
    # retention.c: every closed run is past retention 30 days from now; 500 a batch
    # (worker.c's PURGE_BATCH)
    "retention_purge_plan": [(None, {1: "now() + interval '30 days'", 2: "500"})],
    "retention_purge_batches_plan": [(None, {1: "now() + interval '30 days'", 2: "500"})],
    # reset.c: the activities of a run's history, into a run that has none of them
    # (a reset's new run): one whose activity completed
    "reset_rebuild_activities": [(None, {1: ":'done_run'"})],
    # task_limits.c
    "task_limits_upsert_limits": [(None, {3: "'activity'"})],
    # runs.c
    "runs_load_latest": [(None, {2: ":'closed_wid'"})],
    "runs_load_latest_locked": [(None, {2: ":'wid'"})],
    "runs_load_given": [(None, {2: ":'closed_wid'", 3: ":'closed_run'"})],
    "runs_load_given_locked": [(None, {2: ":'wid'", 3: ":'run'"})],
    "runs_buffer_event": [(None, {1: ":'started_run'", 3: "'WorkflowExecutionSignaled'"})],
    "runs_take_buffered": [(None, {1: ":'started_run'"})],
    "runs_delete_run_user_timers": [(None, {1: ":'timer_run'"})],
    "runs_delete_run_ready_tasks": [(None, {1: ":'ready_run'"})],
    # timers.c
    "timer_rows_insert_timer_payload": [(None, {2: "'deliver'", 4: ":next_event",
                                            5: "'{\"event\": {}}'"})],
    "timer_fire_due_timers": [("due now (the timer worker's call; durable.tick's default"
                           " max_items)", {2: "10000"}),
                          ("all due (2 hours ahead: every timer of the data is due)",
                           {1: "now() + interval '2 hours'", 2: "10000"})],
    "timer_rows_claim_timer": [(None, {1: ":'t_run'", 2: ":'t_kind'", 3: ":t_ref"})],
    "timer_rows_take_timer": [(None, {1: ":'t_run'", 2: ":'t_kind'", 3: ":t_ref"})],
    "user_timers_insert_user_timer": [(None, {2: "'t9'", 3: ":next_event",
                                         4: "now() + interval '1 hour'"})],
    "user_timers_take_user_timer": [(None, {1: ":'timer_run'", 2: ":'timer_id'"})],
    "user_timers_take_user_timer_by_event": [(None, {1: ":'timer_run'", 2: ":timer_event"})],
    "timer_fire_postpone_plan": [(None, {1: ":'t_run'", 2: ":'t_kind'", 3: ":t_ref",
                                     4: "now() + interval '1 minute'"})],
    # workflow.c
    "workflow_insert_run": [
        ("a new workflow id", {1: ":'new_run'", 3: "'explain-new'", 4: "'bench'",
                               5: "'bulk'", 8: ":'new_run'", 11: "NULL", 12: "NULL",
                               13: "NULL", 15: "NULL", 16: "NULL", 17: "NULL", 18: "2",
                               19: "2", 21: "NULL", 22: "NULL", 23: "NULL", 24: "NULL",
                               25: "NULL"}),
        ("the workflow id is running: the conflict",
         {1: ":'new_run'", 3: ":'wid'", 4: "'bench'", 5: "'bulk'", 8: ":'new_run'",
          11: "NULL", 12: "NULL", 13: "NULL", 15: "NULL", 16: "NULL", 17: "NULL",
          18: "2", 19: "2", 21: "NULL", 22: "NULL", 23: "NULL", 24: "NULL",
          25: "NULL"})],
    "workflow_insert_first_run": [
        ("a new workflow id", {1: ":'new_run'", 3: "'explain-new'", 4: "'bench'",
                               5: "'bulk'", 8: ":'new_run'", 11: "NULL", 12: "NULL",
                               13: "NULL", 15: "NULL", 16: "NULL", 17: "NULL", 18: "2",
                               19: "2", 21: "NULL", 22: "NULL", 23: "NULL", 24: "NULL",
                               25: "NULL"}),
        ("the workflow id has runs: nothing inserted",
         {1: ":'new_run'", 3: ":'closed_wid'", 4: "'bench'", 5: "'bulk'",
          8: ":'new_run'", 11: "NULL", 12: "NULL", 13: "NULL", 15: "NULL", 16: "NULL",
          17: "NULL", 18: "2", 19: "2", 21: "NULL", 22: "NULL", 23: "NULL", 24: "NULL",
          25: "NULL"})],
    "workflow_set_continued_to": [(None, {1: ":'closed_run'", 2: ":'run'"})],
    "workflow_set_search_attributes": [(None, {2: "'{\"k\": 1}'"})],
}


class Fail(Exception):
    pass


# ---------------------------------------------------------------- C tokens
TOKEN = re.compile(r'''
    (?P<ws>\s+)
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<chr>'(?:[^'\\\n]|\\.)+')
  | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<num>[0-9][0-9A-Za-z_.]*)
  | (?P<punct>\#\#|\#|->|[{}()\[\],;=*&+\-/<>!?:.%|^~])
''', re.X)


def strip_comments(text):
    """Comments out, strings and character constants kept (one space per comment,
    newlines kept so that #define lines stay lines)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise Fail("unterminated comment")
            out.append(" " + "\n" * text.count("\n", i, j))
            i = j + 2
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def tokenize(text, where):
    toks, pos = [], 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            raise Fail(f"{where}: cannot tokenize at {text[pos:pos + 40]!r}")
        pos = m.end()
        if m.lastgroup != "ws":
            toks.append((m.lastgroup, m.group()))
    return toks


ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'",
           "0": "\0", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "?": "?"}


def c_string(lit, where):
    body, out, i = lit[1:-1], [], 0
    while i < len(body):
        c = body[i]
        if c == "\\":
            e = body[i + 1]
            if e not in ESCAPES or (e == "0" and i + 2 < len(body) and body[i + 2].isdigit()):
                raise Fail(f"{where}: unsupported escape \\{e} in {lit}")
            out.append(ESCAPES[e])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


# ---------------------------------------------------------------- #define
class Macro:
    def __init__(self, name, params, body):
        self.name, self.params, self._body = name, params, body  # (text, where)
        self._tokens = None

    @property
    def body(self):
        if self._tokens is None:
            self._tokens = tokenize(*self._body)
        return self._tokens


def read_defines(text, where):
    """Every #define of text (comments stripped): name -> Macro."""
    macros = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1] + " " + lines[i]
        i += 1
        m = re.match(r"\s*#\s*define\s+([A-Za-z_]\w*)(\(([^)]*)\))?(.*)$", line)
        if not m:
            continue
        params = None
        if m.group(2) is not None:
            params = [p.strip() for p in m.group(3).split(",") if p.strip()]
        # The body is tokenized when the macro is used: defines that no plan uses
        # may hold any C.
        macros[m.group(1)] = Macro(m.group(1), params, (m.group(4), where))
    return macros


def expand(tokens, macros, where, depth=0):
    """Macro-expand a token list (object-like and function-like macros)."""
    if depth > 20:
        raise Fail(f"{where}: macro expansion too deep")
    out, i = [], 0
    while i < len(tokens):
        kind, val = tokens[i]
        # c.h's CppAsString2(x): x macro-expanded, then made a string literal.
        if (kind == "id" and val == "CppAsString2" and i + 3 < len(tokens)
                and tokens[i + 1] == ("punct", "(") and tokens[i + 3] == ("punct", ")")):
            arg = expand([tokens[i + 2]], macros, where, depth + 1)
            out.append(("str", '"' + " ".join(t[1] for t in arg) + '"'))
            i += 4
            continue
        if kind == "id" and val in macros:
            mac = macros[val]
            if mac.params is None:
                out.extend(expand(mac.body, macros, where, depth + 1))
                i += 1
                continue
            if i + 1 >= len(tokens) or tokens[i + 1] != ("punct", "("):
                raise Fail(f"{where}: function-like macro {val} used without arguments")
            args, cur, level, j = [], [], 0, i + 2
            while True:
                if j >= len(tokens):
                    raise Fail(f"{where}: unbalanced arguments of {val}")
                t = tokens[j]
                if t == ("punct", "(" ):
                    level += 1
                elif t == ("punct", ")"):
                    if level == 0:
                        break
                    level -= 1
                if t == ("punct", ",") and level == 0:
                    args.append(cur)
                    cur = []
                else:
                    cur.append(t)
                j += 1
            args.append(cur)
            if args == [[]] and not mac.params:
                args = []
            if len(args) != len(mac.params):
                raise Fail(f"{where}: macro {val} takes {len(mac.params)} arguments, "
                           f"got {len(args)}")
            if any(t[1] in ("#", "##") for t in mac.body):
                raise Fail(f"{where}: macro {val} uses # or ##, not supported")
            bound = {p: expand(a, macros, where, depth + 1) for p, a in zip(mac.params, args)}
            body = []
            for t in mac.body:
                body.extend(bound[t[1]] if t[0] == "id" and t[1] in bound else [t])
            out.extend(expand(body, macros, where, depth + 1))
            i = j + 1
            continue
        out.append((kind, val))
        i += 1
    return out


# ---------------------------------------------------------------- KeptPlan
# One plan (NAME = { NULL, sql, nargs, {types} }) or an array of them
# (NAME[N] = { {NULL, ...}, {NULL, ...} }: the forms of a statement for older
# schemas, e.g. activities.c's load_activity), each element explained as NAME[i].
PLAN = re.compile(r"(?:\bstatic\s+)?\bKeptPlan\s+([A-Za-z_]\w*)\s*(\[\s*\w*\s*\])?\s*=\s*\{")


def split_top(tokens, where):
    """Split a token list at its top-level commas."""
    parts, cur, level = [], [], 0
    for t in tokens:
        if t[1] in ("(", "{", "["):
            level += 1
        elif t[1] in (")", "}", "]"):
            level -= 1
        if t == ("punct", ",") and level == 0:
            parts.append(cur)
            cur = []
        else:
            cur.append(t)
    if level != 0:
        raise Fail(f"{where}: unbalanced braces")
    if cur:
        parts.append(cur)
    return parts


def int_value(tokens, where):
    if len(tokens) == 1 and tokens[0][0] == "num" and tokens[0][1].isdigit():
        return int(tokens[0][1])
    if len(tokens) == 3 and tokens[0][1] == "(" and tokens[2][1] == ")":
        return int_value(tokens[1:2], where)
    raise Fail(f"{where}: nargs is not an integer: {' '.join(v for _, v in tokens)}")


def parse_plan(fields, macros, where):
    """sql and types of one { NULL, sql, nargs, {types} }."""
    if len(fields) != 4:
        raise Fail(f"{where}: expected {{ NULL, sql, nargs, {{types}} }}, got "
                   f"{len(fields)} fields")
    if fields[0] != [("id", "NULL")]:
        raise Fail(f"{where}: first field is not NULL")
    sql_toks = expand(fields[1], macros, where)
    if not sql_toks or any(k != "str" for k, _ in sql_toks):
        bad = [v for k, v in sql_toks if k != "str"]
        raise Fail(f"{where}: the SQL is not only string literals after macro "
                   f"expansion (unknown macro or expression: {' '.join(bad[:5])})")
    sql = "".join(c_string(v, where) for _, v in sql_toks)
    nargs = int_value(expand(fields[2], macros, where), where)
    tt = fields[3]
    if not tt or tt[0][1] != "{" or tt[-1][1] != "}":
        raise Fail(f"{where}: argument types are not a {{...}} list")
    oids = [t for t in split_top(tt[1:-1], where) if t]
    types = []
    for o in oids:
        if len(o) != 1 or o[0][0] != "id":
            raise Fail(f"{where}: argument type {' '.join(v for _, v in o)} "
                       f"is not an OID macro")
        oid = o[0][1]
        if oid == "InvalidOid" and nargs == 0:
            continue
        if oid not in TYPES:
            raise Fail(f"{where}: unknown type OID macro {oid} (add it to TYPES)")
        types.append(TYPES[oid])
    if len(types) != nargs:
        raise Fail(f"{where}: nargs is {nargs} but {len(types)} argument types")
    used = {int(x) for x in re.findall(r"\$(\d+)", sql)}
    if used and max(used) > nargs:
        raise Fail(f"{where}: the SQL uses ${max(used)} but nargs is {nargs}")
    return {"sql": sql, "types": types}


def parse_file(path, header_macros, rel=None):
    """The KeptPlans of one C file; rel is its path under src/ without .c."""
    base = os.path.splitext(os.path.basename(path))[0]
    with open(path, encoding="utf-8") as f:
        text = strip_comments(f.read())
    macros = dict(header_macros)
    macros.update(read_defines(text, path))
    plans = []
    seen = set()
    for m in PLAN.finditer(text):
        name = m.group(1)
        where = f"{path}: KeptPlan {name}"
        if name in seen:
            raise Fail(f"{where}: defined twice")
        seen.add(name)
        end = text.find("};", m.end())
        if end < 0:
            raise Fail(f"{where}: no closing '}};'")
        fields = split_top(tokenize(text[m.end():end], where), where)
        if m.group(2) is None:
            elements = [(name, None, fields)]
        else:
            elements = []
            for i, el in enumerate(fields):
                if not el or el[0][1] != "{" or el[-1][1] != "}":
                    raise Fail(f"{where}: element {i} of the array is not a {{...}}")
                elements.append((f"{name}[{i}]", i, split_top(el[1:-1], where)))
            if not elements:
                raise Fail(f"{where}: an empty array")
        for ename, index, efields in elements:
            p = parse_plan(efields, macros, f"{path}: KeptPlan {ename}")
            p.update({"file": rel or base, "path": path, "name": ename,
                      "prepared": f"{base}_{name}" + ("" if index is None else f"_{index}"),
                      "override": f"{base}_{name}"})
            plans.append(p)
    # A KeptPlan the regex did not see would escape us: count the mentions.
    decls = len(re.findall(r"\bKeptPlan\s+[A-Za-z_]\w*\s*(?:\[\s*\w*\s*\])?\s*=", text))
    if decls != len(seen):
        raise Fail(f"{path}: {decls} KeptPlan definitions but {len(seen)} parsed")
    return plans


# (and the calls of the API functions that change a workflow: batch.c's)
WRITES = re.compile(r"\b(INSERT|UPDATE|DELETE)\b|\bFOR\s+(NO\s+KEY\s+)?UPDATE\b|"
                    r"\bFOR\s+(KEY\s+)?SHARE\b|\bnextval\b|"
                    r"\bdurable\.(terminate|cancel|signal|reset|restart)_workflow\(", re.I)


# Statements that PREPARE refuses (utility statements): shown, not explained.
UTILITY = re.compile(r"^\s*(LOCK|SET|RESET|SHOW|NOTIFY|LISTEN|VACUUM|ANALYZE)\b", re.I)


def dollar_quote(text):
    tag = "sql"
    while f"${tag}$" in text:
        tag += "_"
    return f"${tag}${text}${tag}$"


def emit(plans, out):
    w = out.write
    w("-- Generated by bench/extract_plans.py from src/*.c: do not edit.\n")
    w("SET plan_cache_mode = force_generic_plan;\n")
    # An override of an array applies to each of its elements.
    known = {p["override"] for p in plans}
    for key in OVERRIDES:
        if key not in known:
            raise Fail(f"bench/extract_plans.py: OVERRIDES names {key}, which is no "
                       f"KeptPlan of src/*.c any more")
    current = None
    for p in plans:
        if p["file"] != current:
            current = p["file"]
            w(f"\n\\echo '## src/{current}.c'\n\\echo\n")
        name, n = p["prepared"], len(p["types"])
        cases = OVERRIDES.get(p["override"], [(None, {})])
        writes = bool(WRITES.search(p["sql"]))
        args = f"({', '.join(p['types'])})" if n else ""
        w(f"\n-- src/{p['file']}.c: {p['name']}\n")
        if UTILITY.search(p["sql"]):
            w(f"\\echo '### {p['name']}'\n\\echo\n\\echo '```sql'\n")
            w(f"SELECT {dollar_quote(p['sql'])};\n\\echo '```'\n")
            w("\\echo 'A utility statement: no plan.'\n\\echo\n")
            continue
        w(f"PREPARE {name}{args} AS {p['sql']};\n")
        w(f"\\echo '### {p['name']}'\n\\echo\n\\echo '```sql'\n")
        w(f"SELECT {dollar_quote(p['sql'])};\n\\echo '```'\n")
        for label, over in cases:
            bad = [k for k in over if not 1 <= k <= n]
            if bad:
                raise Fail(f"{p['path']}: KeptPlan {p['name']}: OVERRIDES names "
                           f"parameter ${bad[0]} of {n}")
            vals = []
            for i, t in enumerate(p["types"], 1):
                if i in over:
                    vals.append(over[i])
                elif t in DEFAULTS:
                    vals.append(DEFAULTS[t])
                else:
                    raise Fail(f"{p['path']}: KeptPlan {p['name']}: no sample value "
                               f"for type {t}")
            call = f"EXECUTE {name}({', '.join(vals)})" if n else f"EXECUTE {name}"
            if label:
                w(f"\\echo '{label.replace(chr(39), chr(39) * 2)}:'\n")
            w("\\echo '```'\n")
            if writes:
                w("BEGIN;\n")
            w(f"EXPLAIN (ANALYZE, BUFFERS, SUMMARY OFF) {call};\n")
            if writes:
                w("ROLLBACK;\n")
            w("\\echo '```'\n")
        w("\\echo\n")
        w(f"DEALLOCATE {name};\n")


def main(argv):
    listing = "--list" in argv
    argv = [a for a in argv if a != "--list"]
    src = argv[0] if argv else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                            "..", "src")
    try:
        # src/ and its layer folders (src/README.md)
        files = sorted(os.path.relpath(os.path.join(d, f), src)
                       for d, _, names in os.walk(src) for f in names)
        header_macros = {}
        for h in files:
            if h.endswith(".h"):
                path = os.path.join(src, h)
                with open(path, encoding="utf-8") as f:
                    header_macros.update(read_defines(strip_comments(f.read()), path))
        plans = []
        for c in files:
            if c.endswith(".c"):
                plans.extend(parse_file(os.path.join(src, c), header_macros,
                                        os.path.splitext(c)[0]))
        if not plans:
            raise Fail(f"{src}: no KeptPlan found")
        if listing:
            for p in plans:
                print(f"{p['prepared']}({', '.join(p['types'])}): {p['sql']}")
        else:
            emit(plans, sys.stdout)
    except Fail as e:
        print(f"extract_plans.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
