/*-------------------------------------------------------------------------
 *
 * namespaces.h
 *	  Namespaces and their privileges, cached per backend (namespaces.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_STORE_NAMESPACES_H
#define DURABLE_STORE_NAMESPACES_H

#include "fmgr.h"
#include "utils/jsonb.h"

extern bool NamespaceExists(const char *namespace);
extern void CheckNamespaceExists(const char *namespace);
extern Jsonb *NamespaceActivityPolicy(const char *namespace);

/* Namespace privileges (docs/privileges.md "Privileges"): bits of a grant */
#define NSPRIV_CLIENT	0x01
#define NSPRIV_WORKER	0x02
extern bool NamespacePrivilegesEnforced(void);
extern void CheckNamespacePrivilege(const char *namespace, int privilege);
extern void CheckNamespaceOwner(const char *namespace, const char *action);
extern void CheckNamespacePrivilegeOf(Oid role, const char *namespace,
									  int privilege);
extern bool HasNamespacePrivilege(Oid role, const char *namespace,
								  int privilege);
extern Datum durable_may_read_namespace(PG_FUNCTION_ARGS);

/* Who may read a namespace's counters and pollers (durable.metrics) */
extern bool MonitorSeesAll(void);
extern bool MonitorMayRead(const char *namespace, bool sees_all);

#endif							/* DURABLE_STORE_NAMESPACES_H */
