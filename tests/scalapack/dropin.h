/* Drop-in test: the ScaLAPACK API it is written against (Debian ships no C header), the four
 * element types, and the test cases. No shardmm header is used anywhere in this test. */
#ifndef SHARDMM_TEST_DROPIN_H
#define SHARDMM_TEST_DROPIN_H

#include <complex.h>
#include <stddef.h>

/* ---- BLACS and ScaLAPACK, as exported by libscalapack ---- */
void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridmap(int *ctxt, int *usermap, int ldumap, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc, const int *nprocs);
/* PBLAS tool: rows of [i, i + n) (0-based) on proc, first block inb, then blocks of nb. */
int PB_Cnumroc(int n, int i, int inb, int nb, int proc, int srcproc, int nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
               const int *irsrc, const int *icsrc, const int *ictxt, const int *lld, int *info);
typedef void pgemm_fn(const char *transa, const char *transb, const int *m, const int *n,
                      const int *k, const void *alpha, const void *a, const int *ia, const int *ja,
                      const int *desca, const void *b, const int *ib, const int *jb,
                      const int *descb, const void *beta, void *c, const int *ic, const int *jc,
                      const int *descc);
pgemm_fn psgemm_, pdgemm_, pcgemm_, pzgemm_;

/* ---- element types: 0 s, 1 d, 2 c, 3 z ---- */
typedef struct {
  const char *name;
  size_t size;
  int is_complex;
  double eps;
  pgemm_fn *pgemm;
} Type;
extern const Type kTypes[4];
double complex load(int kind, const void *base, size_t i);
void store(int kind, void *base, size_t i, double complex v);

/* ---- one matrix argument: the whole distributed matrix and the submatrix used ---- */
typedef struct {
  int M, N, mb, nb, rsrc, csrc; /* descriptor */
  int imb, inb;                 /* first block (type-2 descriptor); 0: a type-1 descriptor */
  int i, j;                     /* IX, JX (1-based) */
  int rows, cols;               /* submatrix extent */
  int pad;                      /* LLD = max(1, local rows) + pad */
} MatSpec;

typedef struct {
  int id, kind, grid; /* grid: index into the run's BLACS grids */
  char ta, tb;
  int m, n, k;
  double complex alpha, beta;
  MatSpec a, b, c;
} Case;

/* Deterministic case number `id` on grid `grid` (nprow x npcol), the same on every rank;
 * m, n, k sampled when m < 0. */
Case make_case(int id, int grid, int nprow, int npcol, int kind, char ta, char tb, int m, int n,
               int k);
/* Entry (i, j) (0-based, global) of matrix `which` (0 A, 1 B, 2 C), rounded to the type. */
double complex entry(int kind, int which, int i, int j);

/* ---- a BLACS grid as this process sees it, and one matrix's local piece ---- */
typedef struct {
  int ctxt, nprow, npcol, myrow, mycol; /* myrow == -1: not in the grid */
} Grid;

typedef struct {
  int desc[11], locr, locc, lld; /* desc: 9 entries (type 1) or 11 (type 2) */
  void *data;
} Local;

int max_int(int a, int b);
/* Global index of local index l (0-based) along a block-cyclic dimension whose first block
 * has `first` elements (first = nb: the type-1 map). */
int l2g(int l, int first, int nb, int p, int src, int np);
/* Value of the elements that hold no matrix entry (LLD padding), in the type's precision. */
double complex sentinel(int kind);
/* Size of the first block of rows / columns (MB / NB for a type-1 descriptor). */
int first_row_block(const MatSpec *s);
int first_col_block(const MatSpec *s);
/* This process's piece of matrix `which` of case c with descriptor data from s: every
 * element set, padding rows to sentinel(). Free x->data. */
void make_local(const Case *c, int which, const MatSpec *s, const Grid *g, Local *x);

#endif
