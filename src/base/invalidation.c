/*-------------------------------------------------------------------------
 *
 * invalidation.c
 *	  One relcache callback slot for all of durable's caches.
 *
 * A backend has room for ten relcache callbacks in all (PostgreSQL's
 * MAX_RELCACHE_CALLBACKS), shared by every extension it loads, and one too
 * many is a FATAL error that ends the backend ("out of
 * relcache_callback_list slots").  Citus alone takes most of them.  So
 * durable takes one: the modules that keep a copy of one of durable's
 * tables (the namespaces, the registrations, the executors' limits, the
 * router, the tables and layouts of direct writes) register their callback
 * here, and the one callback durable gives PostgreSQL calls each of them in
 * turn.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "base/invalidation.h"

/* As many as durable's modules register; more is a bug of durable's */
#define MAX_DURABLE_RELCACHE_CALLBACKS 8

static struct
{
	RelcacheCallbackFunction func;
	Datum		arg;
}			relcache_callbacks[MAX_DURABLE_RELCACHE_CALLBACKS];
static int	n_relcache_callbacks = 0;

/* The callback PostgreSQL calls: each of durable's in turn */
static void
call_relcache_callbacks(Datum arg, Oid relid)
{
	int			i;

	for (i = 0; i < n_relcache_callbacks; i++)
		relcache_callbacks[i].func(relcache_callbacks[i].arg, relid);
}

/*
 * Register a callback for relcache invalidations, as
 * CacheRegisterRelcacheCallback does (for the life of the backend), in
 * durable's one slot.  A callback registered already is not added again.
 */
void
DurableRegisterRelcacheCallback(RelcacheCallbackFunction func, Datum arg)
{
	int			i;

	for (i = 0; i < n_relcache_callbacks; i++)
		if (relcache_callbacks[i].func == func &&
			relcache_callbacks[i].arg == arg)
			return;
	if (n_relcache_callbacks >= MAX_DURABLE_RELCACHE_CALLBACKS)
		elog(FATAL, "durable: out of relcache callback slots");
	if (n_relcache_callbacks == 0)
		CacheRegisterRelcacheCallback(call_relcache_callbacks, (Datum) 0);
	relcache_callbacks[n_relcache_callbacks].func = func;
	relcache_callbacks[n_relcache_callbacks].arg = arg;
	n_relcache_callbacks++;
}
