/*-------------------------------------------------------------------------
 *
 * guc.h
 *	  Registering the durable.* settings (guc.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_GUC_H
#define DURABLE_GUC_H

extern void DurableDefineGucs(bool preloaded);

#endif							/* DURABLE_GUC_H */
