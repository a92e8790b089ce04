/*-------------------------------------------------------------------------
 *
 * launcher.h
 *	  The launcher and the ProcessUtility hook (launcher.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_BGW_LAUNCHER_H
#define DURABLE_BGW_LAUNCHER_H

extern bool durable_worker_enabled;
extern char *durable_worker_databases;
extern int	durable_worker_max_sleep;

extern void RegisterLauncher(void);
extern void InstallLauncherHooks(void);

#endif							/* DURABLE_BGW_LAUNCHER_H */
