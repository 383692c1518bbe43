/* Element types and the sampled cases of the drop-in test. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dropin.h"

const Type kTypes[4] = {
    {"s", sizeof(float), 0, FLT_EPSILON, psgemm_},
    {"d", sizeof(double), 0, DBL_EPSILON, pdgemm_},
    {"c", 2 * sizeof(float), 1, FLT_EPSILON, pcgemm_},
    {"z", 2 * sizeof(double), 1, DBL_EPSILON, pzgemm_},
};

double complex load(int kind, const void *base, size_t i) {
  switch (kind) {
    case 0: return ((const float *)base)[i];
    case 1: return ((const double *)base)[i];
    case 2: return ((const float complex *)base)[i];
    default: return ((const double complex *)base)[i];
  }
}

void store(int kind, void *base, size_t i, double complex v) {
  switch (kind) {
    case 0: ((float *)base)[i] = (float)creal(v); break;
    case 1: ((double *)base)[i] = creal(v); break;
    case 2: ((float complex *)base)[i] = (float complex)v; break;
    default: ((double complex *)base)[i] = v; break;
  }
}

double complex entry(int kind, int which, int i, int j) {
  const double x = sin(0.37 * i + 1.13 * j + 0.71 * which) + 0.001 * ((i * 7 + j * 3 + which) % 11);
  const double y = cos(0.53 * i - 0.29 * j + which);
  double complex v = kTypes[kind].is_complex ? x + y * I : x;
  double complex rounded;
  store(kind, &rounded, 0, v); /* through the type's own precision */
  return load(kind, &rounded, 0);
}

/* ---- sampling: a small linear congruential generator seeded by the case ---- */
typedef struct {
  unsigned long long s;
} Rng;

static int pick(Rng *r, int n) {
  r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (int)((r->s >> 33) % (unsigned long long)n);
}

static int dim(Rng *r) { return pick(r, 10) == 0 ? 200 : 1 + pick(r, 30); }

static int block(Rng *r) {
  static const int sizes[7] = {1, 2, 3, 4, 5, 6, 64};
  return sizes[pick(r, 7)];
}

static MatSpec matrix(Rng *r, int rows, int cols, int nprow, int npcol) {
  MatSpec s;
  s.rows = rows;
  s.cols = cols;
  s.i = 1 + pick(r, 13); /* offsets 0..12 */
  s.j = 1 + pick(r, 13);
  s.M = s.i - 1 + rows + pick(r, 4);
  s.N = s.j - 1 + cols + pick(r, 4);
  s.mb = block(r);
  s.nb = block(r);
  s.rsrc = pick(r, 8) == 0 ? -1 : pick(r, nprow); /* -1: replicated over process rows */
  s.csrc = pick(r, 8) == 0 ? -1 : pick(r, npcol);
  s.pad = pick(r, 4);
  s.imb = s.inb = 0;
  if (pick(r, 2)) { /* a type-2 descriptor: first blocks shorter or longer than MB x NB */
    s.imb = 1 + pick(r, s.mb + 3);
    s.inb = 1 + pick(r, s.nb + 3);
  }
  return s;
}

Case make_case(int id, int grid, int nprow, int npcol, int kind, char ta, char tb, int m, int n,
               int k) {
  Rng r = {0x9E3779B97F4A7C15ULL ^ (unsigned long long)id};
  Case c;
  c.id = id;
  c.kind = kind;
  c.grid = grid;
  c.ta = ta;
  c.tb = tb;
  c.m = dim(&r);
  c.n = dim(&r);
  c.k = dim(&r);
  if (m >= 0) c.m = m, c.n = n, c.k = k;
  c.alpha = 2;
  c.beta = 3;
  c.a = ta == 'N' ? matrix(&r, c.m, c.k, nprow, npcol) : matrix(&r, c.k, c.m, nprow, npcol);
  c.b = tb == 'N' ? matrix(&r, c.k, c.n, nprow, npcol) : matrix(&r, c.n, c.k, nprow, npcol);
  c.c = matrix(&r, c.m, c.n, nprow, npcol);
  return c;
}

/* ---- local pieces ---- */
int max_int(int a, int b) { return a > b ? a : b; }

int l2g(int l, int first, int nb, int p, int src, int np) {
  if (src == -1) return l; /* replicated */
  const int dist = (p - src + np) % np;
  if (first == nb) return ((l / nb) * np + dist) * nb + l % nb;
  if (dist == 0 && l < first) return l; /* the first block */
  const int rest = dist == 0 ? l - first : l;
  const int block = (rest / nb + (dist == 0)) * np + dist; /* blocks counted from the first */
  return first + (block - 1) * nb + rest % nb;
}

/* Type 1: ScaLAPACK's NUMROC; type 2: PBLAS' PB_Cnumroc (first block `first`). */
static int local_extent(int n, int first, int nb, int p, int src, int np) {
  if (src == -1) return n;
  return first == nb ? numroc_(&n, &nb, &p, &src, &np) : PB_Cnumroc(n, 0, first, nb, p, src, np);
}

double complex sentinel(int kind) {
  double complex v;
  store(kind, &v, 0, 1e30);
  return load(kind, &v, 0);
}

/* x->desc: DESCINIT's type-1 descriptor, or the type-2 one with s's first block. */
static void describe(const MatSpec *s, const Grid *g, Local *x) {
  int info = 0;
  const int rsrc = s->rsrc < 0 ? 0 : s->rsrc, csrc = s->csrc < 0 ? 0 : s->csrc;
  descinit_(x->desc, &s->M, &s->N, &s->mb, &s->nb, &rsrc, &csrc, &g->ctxt, &x->lld, &info);
  if (info != 0) fprintf(stderr, "descinit_ failed: %d\n", info);
  x->desc[6] = s->rsrc; /* PBLAS takes -1 (replicated), DESCINIT does not */
  x->desc[7] = s->csrc;
  if (s->imb) { /* DTYPE CTXT M N IMB INB MB NB RSRC CSRC LLD */
    const int d2[11] = {2,     g->ctxt, s->M,    s->N,    s->imb, s->inb,
                        s->mb, s->nb,   s->rsrc, s->csrc, x->lld};
    memcpy(x->desc, d2, sizeof d2);
  }
}

int first_row_block(const MatSpec *s) { return s->imb ? s->imb : s->mb; }
int first_col_block(const MatSpec *s) { return s->inb ? s->inb : s->nb; }

void make_local(const Case *c, int which, const MatSpec *s, const Grid *g, Local *x) {
  const int imb = first_row_block(s), inb = first_col_block(s);
  x->locr = local_extent(s->M, imb, s->mb, g->myrow, s->rsrc, g->nprow);
  x->locc = local_extent(s->N, inb, s->nb, g->mycol, s->csrc, g->npcol);
  x->lld = max_int(1, x->locr) + s->pad;
  describe(s, g, x);
  const size_t n = (size_t)x->lld * (size_t)max_int(1, x->locc);
  x->data = malloc(n * kTypes[c->kind].size);
  for (int jl = 0; jl < max_int(1, x->locc); ++jl)
    for (int il = 0; il < x->lld; ++il) {
      const int gi = l2g(il, imb, s->mb, g->myrow, s->rsrc, g->nprow);
      const int gj = l2g(jl, inb, s->nb, g->mycol, s->csrc, g->npcol);
      const int held = il < x->locr && jl < x->locc;
      store(c->kind, x->data, (size_t)il + (size_t)jl * (size_t)x->lld,
            held ? entry(c->kind, which, gi, gj) : sentinel(c->kind));
    }
}
