/*-------------------------------------------------------------------------
 *
 * spi.h
 *	  Kept SPI plans and the SPI connection of an API call (spi.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef DURABLE_STORE_SPI_H
#define DURABLE_STORE_SPI_H

#include "executor/spi.h"
#include "utils/jsonb.h"

typedef struct KeptPlan
{
	SPIPlanPtr	plan;
	const char *sql;
	int			nargs;
	Oid			argtypes[32];
	uint64		executions;		/* by this backend (RunPlan) */
	uint64		replan_at;		/* when it is planned again (spi.c) */
} KeptPlan;

extern SPIPlanPtr GetPlan(KeptPlan *kp);
extern int	RunPlan(KeptPlan *kp, Datum *values, const char *nulls,
					bool read_only, long count);
extern void DurableSPIConnect(void);
extern void DurableSPIFinish(void);
extern Datum SPIGetDatum(int row, int col, bool *isnull);
extern char *SPIGetText(int row, int col);
extern Jsonb *SPIGetJsonbCopy(int row, int col);
extern void DurableSPIOweWrites(int delta);
extern void DurableSPIForgetWrites(void);

#endif							/* DURABLE_STORE_SPI_H */
