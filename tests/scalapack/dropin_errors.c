/* Illegal arguments, reported the PBLAS way: each process of the grid calls PB_Cabort(ctxt,
 * 'PDGEMM', info) once, info = -(position) or -(100 position + entry of the descriptor's
 * 11-entry form), leaves C untouched and returns (this program's PB_Cabort records and returns,
 * as ScaLAPACK's testers' does); a process outside the grid reports DESCA's context (-1002).
 * Run on ScaLAPACK's own PDGEMM too (SHARDMM_DROPIN_ERRORS=common), which pins every expected
 * code to PBLAS itself; only the drop-in also agrees on an error one process row alone sees
 * (PBLAS' other processes would go on into the product and wait for the ones that stopped). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dropin.h"

static int g_calls, g_info;
static char g_name[8];

/* Replaces PBLAS' error handler for the whole program: records instead of aborting. */
void PB_Cabort(int ictxt, char *rout, int info);
void PB_Cabort(int ictxt, char *rout, int info) {
  (void)ictxt;
  ++g_calls;
  g_info = info;
  snprintf(g_name, sizeof g_name, "%s", rout);
}

typedef struct {
  const char *what;
  int expect, drop_in_only;
} Variant;

enum { kVariants = 16, kOutside = 15 };
static const Variant kVariantList[kVariants] = {
    {"TRANSA = X", -1, 0},
    {"TRANSB = Q", -2, 0},
    {"M = -1", -3, 0},
    {"K = -1", -5, 0},
    {"IA = 0", -8, 0},
    {"JB + N - 1 > N_B", -13, 0},
    {"DESCA MB = 0 (type 1: also its IMB)", -1005, 0},
    {"DESCC CSRC = npcol (type 1: entry 10 of the 11)", -1910, 0},
    {"DESCB context differs", -1402, 0},
    {"DESCA DTYPE = 3", -1001, 0},
    {"DESCC LLD too small on process row 0 only (entry 11)", -1911, 1},
    {"type-2 DESCA INB = 0", -1006, 0},
    {"type-2 DESCB NB = 0", -1408, 0},
    {"type-2 DESCC RSRC = nprow", -1909, 0},
    {"type-2 DESCA IMB = 0 and MB = 0", -1005, 0},
    {"process outside the grid", -1002, 0}};

typedef struct {
  char ta[2], tb[2];
  int m, n, k, ia, ja, ib, jb, ic, jc;
  int da[11], db[11], dc[11];
} Args;

/* A type-1 descriptor as the type-2 one describing the same matrix (IMB = MB, INB = NB). */
static void to_type2(int *d) {
  const int d2[11] = {2, d[1], d[2], d[3], d[4], d[5], d[4], d[5], d[6], d[7], d[8]};
  memcpy(d, d2, sizeof d2);
}

static void spoil(Args *a, int v, const Grid *g, const Local *C) {
  switch (v) {
    case 0: a->ta[0] = 'X'; break;
    case 1: a->tb[0] = 'Q'; break;
    case 2: a->m = -1; break;
    case 3: a->k = -1; break;
    case 4: a->ia = 0; break;
    case 5: a->jb = a->db[3] - a->n + 2; break;
    case 6: a->da[4] = 0; break;
    case 7: a->dc[7] = g->npcol; break;
    case 8: a->db[1] = g->ctxt + 1000; break;
    case 9: a->da[0] = 3; break;
    case 10:
      if (g->myrow == 0) a->dc[8] = C->locr - 1;
      break;
    case 11: to_type2(a->da), a->da[5] = 0; break;
    case 12: to_type2(a->db), a->db[7] = 0; break;
    case 13: to_type2(a->dc), a->dc[8] = g->nprow; break;
    case 14: to_type2(a->da), a->da[4] = a->da[6] = 0; break;
    default: a->da[1] = g->ctxt; break; /* the outsider's own (invalid) context */
  }
}

/* One illegal call on this process; returns the number of failed expectations. */
static int check_variant(int v, const Grid *g, const Case *c, Local *A, Local *B, Local *C) {
  Args a = {{'N', 0}, {'N', 0}, c->m, c->n, c->k, 1, 1, 1, 1, 1, 1, {0}, {0}, {0}};
  memcpy(a.da, A->desc, sizeof a.da);
  memcpy(a.db, B->desc, sizeof a.db);
  memcpy(a.dc, C->desc, sizeof a.dc);
  spoil(&a, v, g, C);
  const size_t bytes = (size_t)C->lld * (size_t)max_int(1, C->locc) * kTypes[c->kind].size;
  void *before = malloc(bytes);
  memcpy(before, C->data, bytes);
  const double alpha = 2, beta = 3;
  g_calls = 0;
  g_info = 0;
  g_name[0] = 0;
  pdgemm_(a.ta, a.tb, &a.m, &a.n, &a.k, &alpha, A->data, &a.ia, &a.ja, a.da, B->data, &a.ib, &a.jb,
          a.db, &beta, C->data, &a.ic, &a.jc, a.dc);
  const int bad = g_calls != 1 || g_info != kVariantList[v].expect ||
                  strcmp(g_name, "PDGEMM") != 0 || memcmp(before, C->data, bytes) != 0;
  if (bad)
    printf("FAIL illegal argument '%s' on {%d,%d}: %d PB_Cabort calls, name '%s', info %d "
           "(expected %d)%s\n",
           kVariantList[v].what, g->myrow, g->mycol, g_calls, g_name, g_info,
           kVariantList[v].expect, memcmp(before, C->data, bytes) ? ", C changed" : "");
  free(before);
  return bad;
}

int error_tests(const Grid *g, int drop_in) {
  int failures = 0;
  Case c = {0};
  c.kind = 1;
  c.m = c.n = c.k = 8;
  const MatSpec spec = {8, 8, 2, 2, 0, 0, 0, 0, 1, 1, 8, 8, 1};
  c.a = c.b = c.c = spec;
  Local A = {{0}, 0, 0, 0, NULL}, B = A, C = A;
  if (g->myrow >= 0) {
    make_local(&c, 0, &spec, g, &A);
    make_local(&c, 1, &spec, g, &B);
    make_local(&c, 2, &spec, g, &C);
  } else { /* an outsider holds nothing: any array, descriptors naming its own context */
    const int desc[9] = {1, g->ctxt, 8, 8, 2, 2, 0, 0, 9};
    Local *all[3] = {&A, &B, &C};
    for (int x = 0; x < 3; ++x) {
      memcpy(all[x]->desc, desc, sizeof desc);
      all[x]->lld = 9;
      all[x]->locc = 8;
      all[x]->data = calloc(9 * 8, sizeof(double));
    }
  }
  for (int v = 0; v < kVariants; ++v)
    if ((v == kOutside) == (g->myrow < 0) && (drop_in || !kVariantList[v].drop_in_only))
      failures += check_variant(v, g, &c, &A, &B, &C);
  free(A.data), free(B.data), free(C.data);
  return failures;
}
