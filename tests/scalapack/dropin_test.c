/* Proof that shardmm_scalapack is a drop-in for ScaLAPACK's p?gemm.
 *
 * Written only against ScaLAPACK's API (Cblacs_* grids, descinit_, numroc_, p?gemm_) and
 * built twice from this same source: linked against Debian's libscalapack (the reference),
 * and with libshardmm_scalapack ahead of it. Every run checks each case against a serial
 * oracle (normwise bound) and checks that no element of C outside sub(C) changed, LLD padding
 * included. Roles, from the environment:
 *   SHARDMM_DROPIN_WRITE=file    write every sub(C) to `file` (the reference run)
 *   SHARDMM_DROPIN_COMPARE=file  compare every sub(C) with `file` within the normwise bound
 *   SHARDMM_DROPIN_EXPECT=text   the library providing pdgemm_ must contain `text`
 *   SHARDMM_DROPIN_SAMPLES=n     cases per grid shape, type and transpose pair (default 1)
 *   SHARDMM_DROPIN_FULL_FROM=p   grid shapes of fewer than p processes: 1 case each (default 1)
 *   SHARDMM_DROPIN_ERRORS=1      also check illegal-argument reports through PB_Cabort (this
 *                                program's own, as in ScaLAPACK's testers); =common: only those
 *                                ScaLAPACK's own PDGEMM makes on every process alike
 * Cases: the PBLAS tester's grids that fit the world (row-major, column-major, remapped), all
 * types, all nine transpose pairs, sampled M/N/K, MB/NB, offsets, sources and LLD padding,
 * half of the matrices with a type-2 descriptor (first block IMB x INB, shorter or longer). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dropin.h"

enum { kOrders = 3, kMaxGrids = 9 * kOrders, kTolerance = 10 };
static const int kShapes[9][2] = {{1, 1}, {1, 2}, {2, 1}, {2, 2}, {1, 4},
                                  {4, 1}, {2, 3}, {3, 2}, {6, 1}};

typedef struct {
  int rank, size, ngrids, cases, failures;
  Grid grids[kMaxGrids];
  FILE *write, *compare;
  double worst_oracle, worst_reference;
} Run;

/* Copies sub(C) into dense (m x n, summed over processes later; each of r replicas of a
 * replicated C adds 1/r of its value, so replicas that disagree show as an error); counts
 * changed elements outside sub(C). */
static int collect(const Case *c, const Grid *g, const Local *x, double complex *dense) {
  const MatSpec *s = &c->c;
  const double share = 1.0 / ((s->rsrc == -1 ? g->nprow : 1) * (s->csrc == -1 ? g->npcol : 1));
  int changed = 0;
  for (int jl = 0; jl < max_int(1, x->locc); ++jl)
    for (int il = 0; il < x->lld; ++il) {
      const int gi = l2g(il, first_row_block(s), s->mb, g->myrow, s->rsrc, g->nprow);
      const int gj = l2g(jl, first_col_block(s), s->nb, g->mycol, s->csrc, g->npcol);
      const int held = il < x->locr && jl < x->locc;
      const int si = gi - (s->i - 1), sj = gj - (s->j - 1);
      const double complex v = load(c->kind, x->data, (size_t)il + (size_t)jl * (size_t)x->lld);
      if (held && si >= 0 && si < s->rows && sj >= 0 && sj < s->cols)
        dense[si + (size_t)sj * (size_t)c->m] = share * v;
      else if (v != (held ? entry(c->kind, 2, gi, gj) : sentinel(c->kind))) ++changed;
    }
  return changed;
}

static double complex op_entry(const Case *c, int which, char t, const MatSpec *s, int i, int l) {
  if (t == 'N') return entry(c->kind, which, s->i - 1 + i, s->j - 1 + l);
  const double complex v = entry(c->kind, which, s->i - 1 + l, s->j - 1 + i);
  return t == 'C' ? conj(v) : v;
}

static double sub_norm(const Case *c, int which, const MatSpec *s) {
  double sum = 0;
  for (int j = 0; j < s->cols; ++j)
    for (int i = 0; i < s->rows; ++i) {
      const double complex v = entry(c->kind, which, s->i - 1 + i, s->j - 1 + j);
      sum += creal(v * conj(v));
    }
  return sqrt(sum);
}

/* op(sub(X)) as a dense rows x cols matrix (X = A: which 0, B: which 1). */
static double complex *op_dense(const Case *c, int which, char t, const MatSpec *s, int rows,
                                int cols) {
  double complex *out = malloc(((size_t)rows * (size_t)cols + 1) * sizeof *out);
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i)
      out[i + (size_t)j * (size_t)rows] = op_entry(c, which, t, s, i, j);
  return out;
}

/* Scaled errors of `got` against the oracle and (when given) against `ref`. */
static void errors(const Case *c, const double complex *got, const double complex *ref,
                   double *vs_oracle, double *vs_ref) {
  double complex *A = op_dense(c, 0, c->ta, &c->a, c->m, c->k);
  double complex *B = op_dense(c, 1, c->tb, &c->b, c->k, c->n);
  double diff_oracle = 0, diff_ref = 0;
  for (int j = 0; j < c->n; ++j)
    for (int i = 0; i < c->m; ++i) {
      double complex sum = 0;
      for (int l = 0; l < c->k; ++l)
        sum += A[i + (size_t)l * (size_t)c->m] * B[l + (size_t)j * (size_t)c->k];
      const double complex c0 = entry(c->kind, 2, c->c.i - 1 + i, c->c.j - 1 + j);
      const double complex want = c->alpha * sum + c->beta * c0;
      const size_t at = (size_t)i + (size_t)j * (size_t)c->m;
      diff_oracle += pow(cabs(got[at] - want), 2);
      if (ref) diff_ref += pow(cabs(got[at] - ref[at]), 2);
    }
  free(A), free(B);
  const double denom =
      (sqrt(c->k + 2.0) * cabs(c->alpha) * sub_norm(c, 0, &c->a) * sub_norm(c, 1, &c->b) +
       2 * cabs(c->beta) * sub_norm(c, 2, &c->c)) *
      kTypes[c->kind].eps;
  *vs_oracle = diff_oracle == 0 ? 0 : sqrt(diff_oracle) / denom;
  *vs_ref = diff_ref == 0 ? 0 : sqrt(diff_ref) / denom;
}

/* Rank 0: oracle, reference file (write or compare); returns 1 on failure. */
static int judge(Run *r, const Case *c, const double complex *got) {
  const size_t mn = (size_t)c->m * (size_t)c->n;
  double complex *ref = NULL;
  int bad = 0;
  if (r->write) {
    const int head[3] = {c->id, c->m, c->n};
    bad |=
        fwrite(head, sizeof head, 1, r->write) != 1 || fwrite(got, sizeof *got, mn, r->write) != mn;
  }
  if (r->compare) {
    int head[3] = {0, 0, 0};
    ref = malloc((mn + 1) * sizeof *ref);
    if (fread(head, sizeof head, 1, r->compare) != 1 || head[0] != c->id || head[1] != c->m ||
        head[2] != c->n || fread(ref, sizeof *ref, mn, r->compare) != mn) {
      printf("case %d: reference file does not match this case\n", c->id);
      bad = 1;
    }
  }
  double e_oracle = 0, e_ref = 0;
  errors(c, got, bad ? NULL : ref, &e_oracle, &e_ref);
  free(ref);
  if (e_oracle > r->worst_oracle) r->worst_oracle = e_oracle;
  if (e_ref > r->worst_reference) r->worst_reference = e_ref;
  if (e_oracle > kTolerance || e_ref > kTolerance || !isfinite(e_oracle) || !isfinite(e_ref))
    bad = 1;
  if (bad)
    printf("FAIL case %d: p%sgemm %c%c m=%d n=%d k=%d on grid %d: error %.3g eps vs oracle, "
           "%.3g eps vs reference\n",
           c->id, kTypes[c->kind].name, c->ta, c->tb, c->m, c->n, c->k, c->grid, e_oracle, e_ref);
  return bad;
}

static void run_case(Run *r, const Case *c) {
  const Grid *g = &r->grids[c->grid];
  const size_t mn = (size_t)c->m * (size_t)c->n;
  double complex *dense = calloc(mn + 1, sizeof *dense);
  int changed = 0;
  if (g->myrow >= 0) {
    Local A, B, C;
    make_local(c, 0, &c->a, g, &A);
    make_local(c, 1, &c->b, g, &B);
    make_local(c, 2, &c->c, g, &C);
    const char ta[2] = {c->ta, 0}, tb[2] = {c->tb, 0};
    double complex scalars[2]; /* each holds one value of the case's type */
    store(c->kind, &scalars[0], 0, c->alpha);
    store(c->kind, &scalars[1], 0, c->beta);
    kTypes[c->kind].pgemm(ta, tb, &c->m, &c->n, &c->k, &scalars[0], A.data, &c->a.i, &c->a.j,
                          A.desc, B.data, &c->b.i, &c->b.j, B.desc, &scalars[1], C.data, &c->c.i,
                          &c->c.j, C.desc);
    changed = collect(c, g, &C, dense);
    free(A.data), free(B.data), free(C.data);
  }
  MPI_Allreduce(MPI_IN_PLACE, dense, 2 * (int)mn, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &changed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (r->rank == 0) {
    int bad = judge(r, c, dense);
    if (changed) printf("FAIL case %d: %d elements outside sub(C) changed\n", c->id, changed);
    r->failures += bad || changed;
  }
  ++r->cases;
  free(dense);
}

/* Every PBLAS-tester grid shape that fits the world, three ways: row-major and column-major
 * from Cblacs_gridinit, and a Cblacs_gridmap on the world's ranks in reverse order (so the
 * grid's processes are neither the first world ranks nor in world order). */
static void make_grids(Run *r, int shape_of[kMaxGrids][2]) {
  for (int s = 0; s < 9; ++s) {
    const int p = kShapes[s][0], q = kShapes[s][1];
    if (p * q > r->size) continue;
    for (int o = 0; o < kOrders; ++o) {
      Grid *g = &r->grids[r->ngrids];
      shape_of[r->ngrids][0] = p;
      shape_of[r->ngrids][1] = q;
      ++r->ngrids;
      Cblacs_get(-1, 0, &g->ctxt);
      if (o < 2) {
        Cblacs_gridinit(&g->ctxt, o ? "Col" : "Row", p, q);
      } else {
        int map[6];
        for (int i = 0; i < p * q; ++i) map[i] = r->size - 1 - i;
        Cblacs_gridmap(&g->ctxt, map, p, p, q);
      }
      Cblacs_gridinfo(g->ctxt, &g->nprow, &g->npcol, &g->myrow, &g->mycol);
    }
  }
}

/* Sampled cases: per grid shape, type and transpose pair (the three grid orders in turn).
 * Shapes of fewer than `full_from` processes (swept in full at a smaller rank count of the
 * suite) run one sample per type and transpose pair: on this world, with its idle ranks. */
static int sampled_cases(Run *r, int shape_of[kMaxGrids][2], int samples, int full_from) {
  int id = 0;
  for (int gi = 0; gi < r->ngrids; gi += kOrders) {
    const int n = shape_of[gi][0] * shape_of[gi][1] < full_from ? 1 : samples;
    for (int kind = 0; kind < 4; ++kind)
      for (int t = 0; t < 9 * n; ++t, ++id) {
        const int grid = gi + id % kOrders;
        const Case c = make_case(id, grid, shape_of[grid][0], shape_of[grid][1], kind,
                                 "NTC"[t % 9 / 3], "NTC"[t % 3], -1, -1, -1);
        run_case(r, &c);
      }
  }
  return id;
}

/* Quick returns and one large aligned product, on the largest grid, every type. */
static void special_cases(Run *r, int shape_of[kMaxGrids][2], int id) {
  const int grid = r->ngrids - kOrders, p = shape_of[grid][0], q = shape_of[grid][1];
  for (int kind = 0; kind < 4; ++kind)
    for (int v = 0; v < 5; ++v, ++id) {
      static const int dims[5][3] = {{0, 7, 5}, {9, 8, 0}, {9, 8, 7}, {9, 8, 7}, {200, 200, 200}};
      Case c = make_case(id, grid, p, q, kind, 'N', kTypes[kind].is_complex ? 'C' : 'T', dims[v][0],
                         dims[v][1], dims[v][2]);
      if (v == 2) c.alpha = 0, c.beta = 0; /* sub(C) := 0 */
      if (v == 3) c.alpha = 0, c.beta = 1; /* nothing */
      if (v == 4) {                        /* whole matrices, 64 x 64 blocks: the zero-copy path */
        MatSpec *all[3] = {&c.a, &c.b, &c.c};
        for (int x = 0; x < 3; ++x)
          all[x]->mb = all[x]->nb = 64, all[x]->i = all[x]->j = 1, all[x]->imb = all[x]->inb = 0;
      }
      run_case(r, &c);
    }
}

/* The library that provides pdgemm_ in this build (must contain SHARDMM_DROPIN_EXPECT). */
static int check_provider(const Run *r) {
  union {
    pgemm_fn *f;
    void *p;
  } u = {pdgemm_};
  Dl_info info;
  const char *where = dladdr(u.p, &info) && info.dli_fname ? info.dli_fname : "?";
  const char *expect = getenv("SHARDMM_DROPIN_EXPECT");
  const int bad = expect && !strstr(where, expect);
  if (r->rank == 0) printf("%spdgemm_ is provided by %s\n", bad ? "FAIL " : "", where);
  return bad;
}

static FILE *open_env(const char *var, const char *mode, int rank) {
  const char *path = getenv(var);
  if (!path || rank != 0) return NULL;
  FILE *f = fopen(path, mode);
  if (!f) printf("FAIL cannot open %s ('%s')\n", path, var);
  return f;
}

int error_tests(const Grid *g, int drop_in);

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  Run r;
  memset(&r, 0, sizeof r);
  MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &r.size);
  int shape_of[kMaxGrids][2];
  make_grids(&r, shape_of);
  r.failures = check_provider(&r);
  r.write = open_env("SHARDMM_DROPIN_WRITE", "wb", r.rank);
  r.compare = open_env("SHARDMM_DROPIN_COMPARE", "rb", r.rank);
  if ((getenv("SHARDMM_DROPIN_WRITE") && r.rank == 0 && !r.write) ||
      (getenv("SHARDMM_DROPIN_COMPARE") && r.rank == 0 && !r.compare))
    ++r.failures;
  const char *samples = getenv("SHARDMM_DROPIN_SAMPLES"),
             *full = getenv("SHARDMM_DROPIN_FULL_FROM");
  const int ids = sampled_cases(&r, shape_of, samples ? atoi(samples) : 1, full ? atoi(full) : 1);
  special_cases(&r, shape_of, ids);
  int errors = 0;
  const char *check_errors = getenv("SHARDMM_DROPIN_ERRORS");
  if (check_errors) {
    const int drop_in = strcmp(check_errors, "common") != 0;
    errors = error_tests(&r.grids[r.ngrids - 1], drop_in); /* the reverse-mapped grid */
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  }
  if (r.rank == 0) {
    r.failures += errors;
    printf("%d cases on %d BLACS grids over %d ranks: worst error %.3g eps against the oracle, "
           "%.3g eps against the reference run%s; illegal-argument checks %s; %d failures\n",
           r.cases, r.ngrids, r.size, r.worst_oracle, r.worst_reference, r.compare ? "" : " (none)",
           check_errors ? (errors ? "FAILED" : "passed") : "skipped", r.failures);
  }
  if (r.write) fclose(r.write);
  if (r.compare) fclose(r.compare);
  MPI_Bcast(&r.failures, 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (int g = 0; g < r.ngrids; ++g)
    if (r.grids[g].myrow >= 0) Cblacs_gridexit(r.grids[g].ctxt);
  MPI_Finalize();
  return r.failures ? 1 : 0;
}
