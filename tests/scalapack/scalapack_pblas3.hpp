// ScaLAPACK's own PBLAS level-3 routines (libscalapack), the reference every drop-in test runs
// beside shardmm's prefixed entry points in the same program.
#pragma once

#include "shardmm/c/scalapack.h"

extern "C" {
void pstran_(SHARDMM_PXTRAN_PARAMS(float));
void pdtran_(SHARDMM_PXTRAN_PARAMS(double));
void pctranu_(SHARDMM_PXTRAN_PARAMS(void));
void pztranu_(SHARDMM_PXTRAN_PARAMS(void));
void pctranc_(SHARDMM_PXTRAN_PARAMS(void));
void pztranc_(SHARDMM_PXTRAN_PARAMS(void));
void psgeadd_(SHARDMM_PXGEADD_PARAMS(float));
void pdgeadd_(SHARDMM_PXGEADD_PARAMS(double));
void pcgeadd_(SHARDMM_PXGEADD_PARAMS(void));
void pzgeadd_(SHARDMM_PXGEADD_PARAMS(void));
void pstradd_(SHARDMM_PXTRADD_PARAMS(float));
void pdtradd_(SHARDMM_PXTRADD_PARAMS(double));
void pctradd_(SHARDMM_PXTRADD_PARAMS(void));
void pztradd_(SHARDMM_PXTRADD_PARAMS(void));
void pssyrk_(SHARDMM_PXSYRK_PARAMS(float, float));
void pdsyrk_(SHARDMM_PXSYRK_PARAMS(double, double));
void pcsyrk_(SHARDMM_PXSYRK_PARAMS(void, void));
void pzsyrk_(SHARDMM_PXSYRK_PARAMS(void, void));
void pcherk_(SHARDMM_PXSYRK_PARAMS(void, float));
void pzherk_(SHARDMM_PXSYRK_PARAMS(void, double));
void pssyr2k_(SHARDMM_PXSYR2K_PARAMS(float, float));
void pdsyr2k_(SHARDMM_PXSYR2K_PARAMS(double, double));
void pcsyr2k_(SHARDMM_PXSYR2K_PARAMS(void, void));
void pzsyr2k_(SHARDMM_PXSYR2K_PARAMS(void, void));
void pcher2k_(SHARDMM_PXSYR2K_PARAMS(void, float));
void pzher2k_(SHARDMM_PXSYR2K_PARAMS(void, double));
void pssymm_(SHARDMM_PXSYMM_PARAMS(float));
void pdsymm_(SHARDMM_PXSYMM_PARAMS(double));
void pcsymm_(SHARDMM_PXSYMM_PARAMS(void));
void pzsymm_(SHARDMM_PXSYMM_PARAMS(void));
void pchemm_(SHARDMM_PXSYMM_PARAMS(void));
void pzhemm_(SHARDMM_PXSYMM_PARAMS(void));
void pstrsm_(SHARDMM_PXTRSM_PARAMS(float));
void pdtrsm_(SHARDMM_PXTRSM_PARAMS(double));
void pctrsm_(SHARDMM_PXTRSM_PARAMS(void));
void pztrsm_(SHARDMM_PXTRSM_PARAMS(void));
void pstrmm_(SHARDMM_PXTRSM_PARAMS(float));
void pdtrmm_(SHARDMM_PXTRSM_PARAMS(double));
void pctrmm_(SHARDMM_PXTRSM_PARAMS(void));
void pztrmm_(SHARDMM_PXTRSM_PARAMS(void));
}
