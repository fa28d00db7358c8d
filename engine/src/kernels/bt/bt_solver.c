/* BT: initialisation, forcing, one ADI step and the norms, from the
 * specification in shared/REFERENCE-FACTS.md §1.3-1.8.
 *
 * The three directions share one code path: a direction is a stride (1,
 * n, n*n points), the index of its normal momentum component (1, 2, 3 in
 * 0-based components) and its dissipation coefficient (0.75 in x and y,
 * 1.0 in z).  The grid is cubic, so tx*, ty*, tz* and the *con* constants
 * coincide. */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "bt.h"

/* ce(m, k): exact-solution coefficients, m = 1..5 rows, k = 1..13. */
static const double ce[5][13] = {
    {2.0, 0.0, 0.0, 4.0, 5.0, 3.0, 0.5, 0.02, 0.01, 0.03, 0.5, 0.4, 0.3},
    {1.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.01, 0.03, 0.02, 0.4, 0.3, 0.5},
    {2.0, 2.0, 0.0, 0.0, 0.0, 2.0, 3.0, 0.04, 0.03, 0.05, 0.3, 0.5, 0.4},
    {2.0, 2.0, 0.0, 0.0, 0.0, 2.0, 3.0, 0.03, 0.05, 0.04, 0.2, 0.1, 0.3},
    {5.0, 4.0, 3.0, 2.0, 0.1, 0.4, 0.3, 0.05, 0.04, 0.03, 0.1, 0.3, 0.2},
};

static const double c1 = 1.4, c2 = 0.4, c3 = 0.1, c4 = 1.0, c5 = 1.4;
#define CON43 (4.0 / 3.0)
#define CON16 (1.0 / 6.0)

static const bt_class classes[] = {
    {'S', 12, 60, 0.010,
     {1.7034283709541311e-01, 1.2975252070034097e-02, 3.2527926989486055e-02,
      2.6436421275166801e-02, 1.9211784131744430e-01},
     {4.9976913345811579e-04, 4.5195666782961927e-05, 7.3973765172921357e-05,
      7.3821238632439731e-05, 8.9269630987491446e-04},
     {0.1149036328945e+02, 0.9156788904727e+00, 0.2857899428614e+01, 0.2598273346734e+01, 0.2652795397547e+02}},
    {'W', 24, 200, 0.0008,
     {0.1125590409344e+03, 0.1180007595731e+02, 0.2710329767846e+02, 0.2469174937669e+02,
      0.2638427874317e+03},
     {0.4419655736008e+01, 0.4638531260002e+00, 0.1011551749967e+01, 0.9235878729944e+00,
      0.1018045837718e+02},
     {0.6729594398612e+02, 0.5264523081690e+01, 0.1677107142637e+02, 0.1508721463436e+02, 0.1477018363393e+03}},
    {'A', 64, 200, 0.0008,
     {1.0806346714637264e+02, 1.1319730901220813e+01, 2.5974354511582465e+01,
      2.3665622544678910e+01, 2.5278963211748344e+02},
     {4.2348416040525025e+00, 4.4390282496995698e-01, 9.6692480136345650e-01,
      8.8302063039765474e-01, 9.7379901770829278e+00},
     {0.6482218724961e+02, 0.5066461714527e+01, 0.1613931961359e+02, 0.1452010201481e+02, 0.1420099377681e+03}},
    {'B', 102, 200, 0.0003,
     {1.4233597229287254e+03, 9.9330522590150238e+01, 3.5646025644535285e+02,
      3.2485447959084092e+02, 3.2707541254659363e+03},
     {5.2969847140936856e+01, 4.4632896115670668e+00, 1.3122573342210174e+01,
      1.2006925323559144e+01, 1.2459576151035986e+02},
     {0.1477545106464e+03, 0.1108895555053e+02, 0.3698065590331e+02, 0.3310505581440e+02, 0.3157928282563e+03}},
    {'C', 162, 200, 0.0001,
     {0.62398116551764615e+04, 0.50793239190423964e+03, 0.15423530093013596e+04,
      0.13302387929291190e+04, 0.11604087428436455e+05},
     {0.16462008369091265e+03, 0.11497107903824313e+02, 0.41207446207461508e+02,
      0.37087651059694167e+02, 0.36211053051841265e+03},
     {0.2597156483475e+03, 0.1985384289495e+02, 0.6517950485788e+02, 0.5757235541520e+02, 0.5215668188726e+03}},
};

const bt_class *bt_class_find(char name)
{
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++)
        if (classes[i].name == name)
            return &classes[i];
    return NULL;
}

/* One direction of the ADI scheme. */
typedef struct direction {
    long stride;   /* in points */
    int normal;    /* 0-based component of the normal momentum */
    double d;      /* dx*, dy* (0.75) or dz* (1.0) */
} direction;

static direction dir_of(const bt_problem *p, int axis)
{
    long n = p->n;
    direction d = {axis == 0 ? 1 : axis == 1 ? n : n * n, axis + 1, axis == 2 ? 1.0 : 0.75};
    return d;
}

/* Point (i, j, k) in global coordinates; a rank stores its planes
 * k0..k0+nk-1 and two ghost planes on each side. */
#define AT(p, i, j, k) ((((long)((k) - (p)->k0 + 2) * (p)->n + (j)) * (p)->n + (i)))

/* The planes of the global interior (1..n-2) this rank owns: [kb, ke]. */
static inline int first_interior(const bt_problem *p) { return p->k0 > 1 ? p->k0 : 1; }
static inline int last_interior(const bt_problem *p)
{
    int k1 = p->k0 + p->nk - 1;
    return k1 < p->n - 2 ? k1 : p->n - 2;
}

/* Point s of the line along axis through the fixed coordinates (b, c):
 * x lines are (s, c, b), y lines (c, s, b), z lines (c, b, s). */
static inline void line_point(int axis, int s, int b, int c, int *i, int *j, int *k)
{
    *i = axis == 0 ? s : c;
    *j = axis == 0 ? c : axis == 1 ? s : b;
    *k = axis == 2 ? s : b;
}

static void exact_solution(double xi, double eta, double zeta, double out[5])
{
    for (int m = 0; m < 5; m++)
        out[m] = ce[m][0] + xi * (ce[m][1] + xi * (ce[m][4] + xi * (ce[m][7] + xi * ce[m][10]))) +
                 eta * (ce[m][2] + eta * (ce[m][5] + eta * (ce[m][8] + eta * ce[m][11]))) +
                 zeta * (ce[m][3] + zeta * (ce[m][6] + zeta * (ce[m][9] + zeta * ce[m][12])));
}

int bt_problem_init(bt_problem *p, int n, double dt, int k0, int nk, void *comm)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->dt = dt;
    p->k0 = k0;
    p->nk = nk;
    p->comm = comm;
    MPI_Comm c = *(MPI_Comm *)comm;
    MPI_Comm_rank(c, &p->rank);
    MPI_Comm_size(c, &p->nranks);
    p->dnm1 = 1.0 / (n - 1);
    p->t1 = 1.0 / (p->dnm1 * p->dnm1); /* tx1 */
    p->t2 = 1.0 / (2.0 * p->dnm1);     /* tx2 */
    p->tt1 = 1.0 / p->dnm1;            /* tx3 */
    size_t pts = (size_t)n * n * (size_t)(nk + 4);
    if (p->nranks > 1) { /* C' of every owned point, kept between the pipelined sweeps */
        p->cprime = malloc(sizeof(double) * 25 * (size_t)n * n * (size_t)nk);
        if (!p->cprime)
            return -1;
    }
    p->scratch = malloc(sizeof(double) * 25 * 3 * (size_t)n); /* F, N, C' of one line */
    p->u = calloc(pts * 5, sizeof(double));
    p->rhs = calloc(pts * 5, sizeof(double));
    p->forcing = calloc(pts * 5, sizeof(double));
    p->rho_i = calloc(pts, sizeof(double));
    p->us = calloc(pts, sizeof(double));
    p->vs = calloc(pts, sizeof(double));
    p->ws = calloc(pts, sizeof(double));
    p->square = calloc(pts, sizeof(double));
    p->qs = calloc(pts, sizeof(double));
    if (!p->scratch || !p->u || !p->rhs || !p->forcing || !p->rho_i || !p->us || !p->vs || !p->ws ||
        !p->square || !p->qs) {
        bt_problem_free(p);
        return -1;
    }
    return 0;
}

void bt_problem_free(bt_problem *p)
{
    free(p->u);
    free(p->rhs);
    free(p->forcing);
    free(p->rho_i);
    free(p->us);
    free(p->vs);
    free(p->ws);
    free(p->square);
    free(p->qs);
    free(p->cprime);
    free(p->scratch);
    memset(p, 0, sizeof *p);
}

void bt_initialize(bt_problem *p)
{
    const int n = p->n;
    const double h = p->dnm1;
    const int k1 = p->k0 + p->nk - 1;
    for (long q = 0; q < (long)n * n * (p->nk + 4) * 5; q++)
        p->u[q] = 1.0;
    for (int k = p->k0; k <= k1; k++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                double xi = i * h, eta = j * h, zeta = k * h, face[6][5];
                exact_solution(0.0, eta, zeta, face[0]);
                exact_solution(1.0, eta, zeta, face[1]);
                exact_solution(xi, 0.0, zeta, face[2]);
                exact_solution(xi, 1.0, zeta, face[3]);
                exact_solution(xi, eta, 0.0, face[4]);
                exact_solution(xi, eta, 1.0, face[5]);
                double *u = &p->u[AT(p, i, j, k) * 5];
                for (int m = 0; m < 5; m++) {
                    double px = xi * face[1][m] + (1.0 - xi) * face[0][m];
                    double py = eta * face[3][m] + (1.0 - eta) * face[2][m];
                    double pz = zeta * face[5][m] + (1.0 - zeta) * face[4][m];
                    u[m] = px + py + pz - px * py - px * pz - py * pz + px * py * pz;
                }
            }
    /* the six boundary planes take the exact solution */
    for (int k = p->k0; k <= k1; k++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                if (i && j && k && i != n - 1 && j != n - 1 && k != n - 1)
                    continue;
                exact_solution(i * h, j * h, k * h, &p->u[AT(p, i, j, k) * 5]);
            }
}

/* The fourth-difference dissipation at position q of a line of n points
 * (q = 1..n-2), applied to f[q*stride], as in §1.5's table. */
static inline double dissipation(const double *f, long s, int q, int n)
{
    if (q == 1)
        return 5.0 * f[0] - 4.0 * f[s] + f[2 * s];
    if (q == 2)
        return -4.0 * f[-s] + 6.0 * f[0] - 4.0 * f[s] + f[2 * s];
    if (q == n - 3)
        return f[-2 * s] - 4.0 * f[-s] + 6.0 * f[0] - 4.0 * f[s];
    if (q == n - 2)
        return f[-2 * s] - 4.0 * f[-s] + 5.0 * f[0];
    return f[-2 * s] - 4.0 * f[-s] + 6.0 * f[0] - 4.0 * f[s] + f[2 * s];
}

void bt_exact_rhs(bt_problem *p)
{
    const int n = p->n;
    const double h = p->dnm1, t1 = p->t1, t2 = p->t2, t3 = p->tt1;
    const double c3c4t3 = c3 * c4 * t3;
    const double con1 = c3c4t3 * CON43 * t3, con2 = c3c4t3 * t3,
                 con3 = c3c4t3 * (1.0 - c1 * c5) * t3, con4 = c3c4t3 * CON16 * t3,
                 con5 = c3c4t3 * c1 * c5 * t3, dssp = 0.25;
    memset(p->forcing, 0, sizeof(double) * 5 * (size_t)n * n * (size_t)(p->nk + 4));
    const int kb = first_interior(p), ke = last_interior(p);
    double *ue = malloc(sizeof(double) * 5 * n), *buf = malloc(sizeof(double) * 5 * n),
           *cuf = malloc(sizeof(double) * n), *q = malloc(sizeof(double) * n);
    for (int axis = 0; axis < 3; axis++) {
        const direction d = dir_of(p, axis);
        const int a = d.normal;
        const double dt1 = d.d * t1;
        /* x and y lines lie in one plane k = b: only owned planes; z lines
         * cross every slab and are evaluated whole (the exact solution is
         * known everywhere), then kept where this rank owns the point. */
        const int b_first = axis == 2 ? 1 : kb, b_last = axis == 2 ? n - 2 : ke;
        for (int b = b_first; b <= b_last; b++)
            for (int c = 1; c < n - 1; c++) {
                /* the line through the two fixed interior coordinates */
                for (int s = 0; s < n; s++) {
                    int i, j, k;
                    line_point(axis, s, b, c, &i, &j, &k);
                    double *e = &ue[5 * s], *f = &buf[5 * s];
                    exact_solution(i * h, j * h, k * h, e);
                    for (int m = 1; m < 5; m++)
                        f[m] = e[m] / e[0];
                    cuf[s] = f[a] * f[a];
                    f[0] = f[1] * f[1] + f[2] * f[2] + f[3] * f[3];
                    q[s] = 0.5 * (f[1] * e[1] + f[2] * e[2] + f[3] * e[3]);
                }
                for (int s = 1; s < n - 1; s++) {
                    int i, j, k;
                    line_point(axis, s, b, c, &i, &j, &k);
                    if (k < kb || k > ke)
                        continue;
                    double *fo = &p->forcing[AT(p, i, j, k) * 5];
                    const double *e0 = &ue[5 * s], *ep = e0 + 5, *em = e0 - 5;
                    const double *b0 = &buf[5 * s], *bp = b0 + 5, *bm = b0 - 5;
#define D2(x, comp) ((x##p)[comp] - 2.0 * (x##0)[comp] + (x##m)[comp])
                    fo[0] += -t2 * (ep[a] - em[a]) + dt1 * D2(e, 0);
                    for (int m = 1; m < 4; m++) {
                        double flux_p = ep[m] * bp[a], flux_m = em[m] * bm[a];
                        double con = con2;
                        if (m == a) {
                            flux_p += c2 * (ep[4] - q[s + 1]);
                            flux_m += c2 * (em[4] - q[s - 1]);
                            con = con1;
                        }
                        fo[m] += -t2 * (flux_p - flux_m) + con * D2(b, m) + dt1 * D2(e, m);
                    }
                    fo[4] += -t2 * (bp[a] * (c1 * ep[4] - c2 * q[s + 1]) -
                                    bm[a] * (c1 * em[4] - c2 * q[s - 1])) +
                             0.5 * con3 * D2(b, 0) + con4 * (cuf[s + 1] - 2.0 * cuf[s] + cuf[s - 1]) +
                             con5 * D2(b, 4) + dt1 * D2(e, 4);
#undef D2
                    for (int m = 0; m < 5; m++)
                        fo[m] -= dssp * dissipation(&ue[5 * s + m], 5, s, n);
                }
            }
    }
    for (int k = kb; k <= ke; k++)
        for (int j = 1; j < n - 1; j++)
            for (int i = 1; i < n - 1; i++)
                for (int m = 0; m < 5; m++)
                    p->forcing[AT(p, i, j, k) * 5 + m] *= -1.0;
    free(ue);
    free(buf);
    free(cuf);
    free(q);
}

/* Two ghost planes on each side, in two rounds of one plane: the second
 * round forwards what the first brought, so a slab of one plane works. */
static void exchange_halo(bt_problem *p)
{
    if (p->nranks == 1)
        return;
    MPI_Comm comm = *(MPI_Comm *)p->comm;
    const int n = p->n, k0 = p->k0, k1 = p->k0 + p->nk - 1, count = 5 * n * n;
    const int prev = p->rank > 0 ? p->rank - 1 : MPI_PROC_NULL;
    const int next = p->rank < p->nranks - 1 ? p->rank + 1 : MPI_PROC_NULL;
    for (int round = 1; round <= 2; round++) {
        MPI_Sendrecv(&p->u[AT(p, 0, 0, k1 - round + 1) * 5], count, MPI_DOUBLE, next, round,
                     &p->u[AT(p, 0, 0, k0 - round) * 5], count, MPI_DOUBLE, prev, round, comm,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(&p->u[AT(p, 0, 0, k0 + round - 1) * 5], count, MPI_DOUBLE, prev, 10 + round,
                     &p->u[AT(p, 0, 0, k1 + round) * 5], count, MPI_DOUBLE, next, 10 + round, comm,
                     MPI_STATUS_IGNORE);
    }
}

void bt_compute_rhs(bt_problem *p)
{
    const int n = p->n;
    const double t1 = p->t1, t2 = p->t2, t3 = p->tt1, dt = p->dt;
    const double c3c4t3 = c3 * c4 * t3;
    const double con2 = c3c4t3 * t3, con3 = c3c4t3 * (1.0 - c1 * c5) * t3,
                 con4 = c3c4t3 * CON16 * t3, con5 = c3c4t3 * c1 * c5 * t3, dssp = 0.25;
    const int kb = first_interior(p), ke = last_interior(p);
    exchange_halo(p);
    /* derived quantities on every stored plane that exists globally */
    const int klo = p->k0 - 2 > 0 ? p->k0 - 2 : 0;
    const int khi = p->k0 + p->nk + 1 < n - 1 ? p->k0 + p->nk + 1 : n - 1;
    for (long q = AT(p, 0, 0, klo); q < AT(p, 0, 0, khi + 1); q++) {
        const double *u = &p->u[5 * q];
        double r = 1.0 / u[0];
        p->rho_i[q] = r;
        p->us[q] = u[1] * r;
        p->vs[q] = u[2] * r;
        p->ws[q] = u[3] * r;
        p->square[q] = 0.5 * (u[1] * u[1] + u[2] * u[2] + u[3] * u[3]) * r;
        p->qs[q] = p->square[q] * r;
    }
    memcpy(p->rhs, p->forcing, sizeof(double) * 5 * (size_t)n * n * (size_t)(p->nk + 4));
    const double *vel[4] = {NULL, p->us, p->vs, p->ws};
    for (int axis = 0; axis < 3; axis++) {
        const direction d = dir_of(p, axis);
        const long s = d.stride;
        const int a = d.normal;
        const double dt1 = d.d * t1;
        const double *va = vel[a];
        for (int k = kb; k <= ke; k++)
            for (int j = 1; j < n - 1; j++)
                for (int i = 1; i < n - 1; i++) {
                    const long q = AT(p, i, j, k), qp = q + s, qm = q - s;
                    const int pos = axis == 0 ? i : axis == 1 ? j : k;
                    const double *u0 = &p->u[5 * q], *up = &p->u[5 * qp], *um = &p->u[5 * qm];
                    double *rh = &p->rhs[5 * q];
                    const double vp = va[qp], v0 = va[q], vm = va[qm];
                    rh[0] += dt1 * (up[0] - 2.0 * u0[0] + um[0]) - t2 * (up[a] - um[a]);
                    for (int m = 1; m < 4; m++) {
                        const double *vc = vel[m];
                        double visc = (m == a ? con2 * CON43 : con2) * (vc[qp] - 2.0 * vc[q] + vc[qm]);
                        double flux = up[m] * vp - um[m] * vm;
                        if (m == a)
                            flux += c2 * (up[4] - p->square[qp] - um[4] + p->square[qm]);
                        rh[m] += dt1 * (up[m] - 2.0 * u0[m] + um[m]) + visc - t2 * flux;
                    }
                    rh[4] += dt1 * (up[4] - 2.0 * u0[4] + um[4]) +
                             con3 * (p->qs[qp] - 2.0 * p->qs[q] + p->qs[qm]) +
                             con4 * (vp * vp - 2.0 * v0 * v0 + vm * vm) +
                             con5 * (up[4] * p->rho_i[qp] - 2.0 * u0[4] * p->rho_i[q] +
                                     um[4] * p->rho_i[qm]) -
                             t2 * ((c1 * up[4] - c2 * p->square[qp]) * vp -
                                   (c1 * um[4] - c2 * p->square[qm]) * vm);
                    for (int m = 0; m < 5; m++)
                        rh[m] -= dssp * dissipation(&u0[m], 5 * s, pos, n);
                }
    }
    for (int k = kb; k <= ke; k++)
        for (int j = 1; j < n - 1; j++)
            for (int i = 1; i < n - 1; i++)
                for (int m = 0; m < 5; m++)
                    p->rhs[AT(p, i, j, k) * 5 + m] *= dt;
}

#include "bt_blocks.h"

/* Solve every interior line of one direction that lies wholly on this
 * rank (x and y always; z when one rank holds every plane); rhs holds the
 * solution after. */
static void line_solve(bt_problem *p, int axis, block *F, block *N, block *Cp)
{
    const int n = p->n;
    const direction d = dir_of(p, axis);
    const double t1 = p->dt * p->t1, t2 = p->dt * p->t2, diag = t1 * d.d;
    const int b_first = axis == 2 ? 1 : first_interior(p), b_last = axis == 2 ? n - 2 : last_interior(p);
    for (int b = b_first; b <= b_last; b++)
        for (int c = 1; c < n - 1; c++) {
            int i0, j0, k0;
            line_point(axis, 0, b, c, &i0, &j0, &k0);
            const long first = AT(p, i0, j0, k0); /* position 0 of this line */
            for (int s = 0; s < n; s++)
                bt_jacobians(&p->u[5 * (first + s * d.stride)], d.normal, F[s], N[s]);
            for (int s = 1; s < n - 1; s++) {
                block A, B;
                double *r = &p->rhs[5 * (first + s * d.stride)];
                bt_build_row(F[s - 1], N[s - 1], N[s], F[s + 1], N[s + 1], t1, t2, diag, A, B, Cp[s]);
                if (s > 1) /* position 0 is a boundary: r = 0, C' = 0 there */
                    bt_eliminate(A, B, Cp[s - 1], r - 5 * d.stride, Cp[s], r);
                else
                    bt_solve_block(B, Cp[s], r);
            }
            for (int s = n - 3; s >= 1; s--) {
                double *r = &p->rhs[5 * (first + s * d.stride)];
                bt_back_substitute(Cp[s], r + 5 * d.stride, r);
            }
        }
}

/* z lines cross the slabs: block Thomas pipelined over ranks, one j-row of
 * lines per message.  Forward, rank p takes C' and r of the plane below its
 * slab from p-1 and hands its top plane's to p+1; backward, r of the plane
 * above comes from p+1 and its first plane's goes to p-1. */
static void z_solve_pipelined(bt_problem *p, block *F, block *N)
{
    MPI_Comm comm = *(MPI_Comm *)p->comm;
    const int n = p->n, kb = first_interior(p), ke = last_interior(p), lines = n - 2;
    const direction d = dir_of(p, 2);
    const double t1 = p->dt * p->t1, t2 = p->dt * p->t2, diag = t1 * d.d;
    const bool owns = kb <= ke;
    const bool from_below = owns && kb > 1, to_above = owns && ke < n - 2;
    double *msg = malloc(sizeof(double) * 30 * (size_t)lines);
#define CPRIME(i, j, k) ((block *)&p->cprime[25 * ((((long)(k) - p->k0) * n + (j)) * n + (i))])
    for (int j = 1; j < n - 1; j++) {
        if (from_below)
            MPI_Recv(msg, 30 * lines, MPI_DOUBLE, p->rank - 1, j, comm, MPI_STATUS_IGNORE);
        for (int i = 1; i < n - 1 && owns; i++) {
            for (int k = kb - 1; k <= ke + 1; k++)
                bt_jacobians(&p->u[5 * AT(p, i, j, k)], d.normal, F[k - kb + 1], N[k - kb + 1]);
            for (int k = kb; k <= ke; k++) {
                const int s = k - kb + 1;
                block A, B;
                double *r = &p->rhs[5 * AT(p, i, j, k)];
                block *C = CPRIME(i, j, k);
                bt_build_row(F[s - 1], N[s - 1], N[s], F[s + 1], N[s + 1], t1, t2, diag, A, B, *C);
                if (k == 1)
                    bt_solve_block(B, *C, r);
                else if (k == kb) /* the previous row lives on rank p-1 */
                    bt_eliminate(A, B, (const double(*)[5]) & msg[30 * (i - 1)],
                                 &msg[30 * (i - 1) + 25], *C, r);
                else
                    bt_eliminate(A, B, *CPRIME(i, j, k - 1), r - 5L * n * n, *C, r);
            }
            if (to_above) {
                memcpy(&msg[30 * (i - 1)], CPRIME(i, j, ke), 25 * sizeof(double));
                memcpy(&msg[30 * (i - 1) + 25], &p->rhs[5 * AT(p, i, j, ke)], 5 * sizeof(double));
            }
        }
        if (to_above)
            MPI_Send(msg, 30 * lines, MPI_DOUBLE, p->rank + 1, j, comm);
    }
    for (int j = 1; j < n - 1; j++) {
        if (to_above)
            MPI_Recv(msg, 5 * lines, MPI_DOUBLE, p->rank + 1, n + j, comm, MPI_STATUS_IGNORE);
        for (int i = 1; i < n - 1 && owns; i++) {
            for (int k = ke; k >= kb; k--) {
                double *r = &p->rhs[5 * AT(p, i, j, k)];
                if (k < ke)
                    bt_back_substitute(*CPRIME(i, j, k), r + 5L * n * n, r);
                else if (to_above)
                    bt_back_substitute(*CPRIME(i, j, k), &msg[5 * (i - 1)], r);
                /* k == n-2: the plane above is the boundary, r = 0 there */
            }
            if (from_below)
                memcpy(&msg[5 * (i - 1)], &p->rhs[5 * AT(p, i, j, kb)], 5 * sizeof(double));
        }
        if (from_below)
            MPI_Send(msg, 5 * lines, MPI_DOUBLE, p->rank - 1, n + j, comm);
    }
#undef CPRIME
    free(msg);
}

void bt_step(bt_problem *p)
{
    const int n = p->n;
    block *F = (block *)p->scratch, *N = F + n, *Cp = N + n; /* allocated once, not per step */
    bt_compute_rhs(p);
    line_solve(p, 0, F, N, Cp);
    line_solve(p, 1, F, N, Cp);
    if (p->nranks == 1)
        line_solve(p, 2, F, N, Cp);
    else
        z_solve_pipelined(p, F, N);
    for (int k = first_interior(p); k <= last_interior(p); k++)
        for (int j = 1; j < n - 1; j++)
            for (int i = 1; i < n - 1; i++)
                for (int m = 0; m < 5; m++)
                    p->u[AT(p, i, j, k) * 5 + m] += p->rhs[AT(p, i, j, k) * 5 + m];
}

/* Squared error summed over `planes` whole planes starting at global k. */
static void error_sums(int n, const double *u, int k, int planes, double sum[5])
{
    const double h = 1.0 / (n - 1);
    for (int kk = 0; kk < planes; kk++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                double e[5];
                exact_solution(i * h, j * h, (k + kk) * h, e);
                for (int m = 0; m < 5; m++) {
                    double diff = u[(((long)kk * n + j) * n + i) * 5 + m] - e[m];
                    sum[m] += diff * diff;
                }
            }
}

static void finish_norm(int n, const double sum[5], double scale, double out[5])
{
    double inner = (double)(n - 2) * (n - 2) * (n - 2);
    for (int m = 0; m < 5; m++)
        out[m] = sqrt(sum[m] / inner) / scale;
}

void bt_error_norm(const bt_problem *p, double xce[5])
{
    double mine[5] = {0}, all[5];
    error_sums(p->n, &p->u[5 * AT(p, 0, 0, p->k0)], p->k0, p->nk, mine);
    MPI_Allreduce(mine, all, 5, MPI_DOUBLE, MPI_SUM, *(MPI_Comm *)p->comm);
    finish_norm(p->n, all, 1.0, xce);
}

void bt_error_norm_of(int n, const double *u, double xce[5])
{
    double sum[5] = {0};
    error_sums(n, u, 0, n, sum);
    finish_norm(n, sum, 1.0, xce);
}

void bt_residual_norm(bt_problem *p, double xcr[5])
{
    const int n = p->n;
    bt_compute_rhs(p);
    double mine[5] = {0}, all[5];
    for (int k = first_interior(p); k <= last_interior(p); k++)
        for (int j = 1; j < n - 1; j++)
            for (int i = 1; i < n - 1; i++)
                for (int m = 0; m < 5; m++) {
                    double v = p->rhs[AT(p, i, j, k) * 5 + m];
                    mine[m] += v * v;
                }
    MPI_Allreduce(mine, all, 5, MPI_DOUBLE, MPI_SUM, *(MPI_Comm *)p->comm);
    finish_norm(n, all, p->dt, xcr);
}

double bt_mops(int n, int steps, double seconds)
{
    double n3 = (double)n * n * n, navg = n;
    return seconds > 0 ? 1e-6 * steps * (3478.8 * n3 - 17655.7 * navg * navg + 28023.7 * navg) / seconds
                       : 0;
}
