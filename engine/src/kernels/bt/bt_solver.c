/* BT: initialisation, forcing, one ADI step and the norms, from the
 * specification in shared/REFERENCE-FACTS.md §1.3-1.8.
 *
 * The three directions share one code path: a direction is a stride in
 * a cell's storage, the index of its normal momentum component (1, 2, 3 in
 * 0-based components) and its dissipation coefficient (0.75 in x and y,
 * 1.0 in z).  Every loop runs over this rank's cells (bt_cells.c).  The grid is cubic, so tx*, ty*, tz* and the *con* constants
 * coincide. */
#include <math.h>
#include <mpi.h>
#include <stdbool.h>
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
/* One direction of the ADI scheme: its normal momentum component (1, 2, 3
 * in 0-based components) and dissipation coefficient (0.75 in x and y, 1.0
 * in z).  Its stride depends on the cell. */
typedef struct direction {
    int normal;    /* 0-based component of the normal momentum */
    double d;      /* dx*, dy* (0.75) or dz* (1.0) */
} direction;

static direction dir_of(int axis)
{
    direction d = {axis + 1, axis == 2 ? 1.0 : 0.75};
    return d;
}

/* Stored points between neighbours along an axis of a cell. */
static inline long stride_of(const bt_cell *c, int axis)
{
    return axis == 0 ? 1 : axis == 1 ? c->dim[0] : (long)c->dim[0] * c->dim[1];
}

/* The points of the global interior (1..n-2) a cell owns along an axis. */
static inline int first_interior(const bt_cell *c, int axis)
{
    return c->lo[axis] > 1 ? c->lo[axis] : 1;
}
static inline int last_interior(const bt_cell *c, int axis, int n)
{
    int last = c->lo[axis] + c->size[axis] - 1;
    return last < n - 2 ? last : n - 2;
}

/* The lines along `axis` are indexed by two fixed coordinates, an outer
 * one b (rows of lines, one message each when pipelined) and an inner c:
 * x lines are (s, c, b), y lines (c, s, b), z lines (c, b, s). */
static inline void line_point(int axis, int s, int b, int c, int *i, int *j, int *k)
{
    *i = axis == 0 ? s : c;
    *j = axis == 0 ? c : axis == 1 ? s : b;
    *k = axis == 2 ? s : b;
}
static inline int outer_axis(int axis) { return axis == 2 ? 1 : 2; }
static inline int inner_axis(int axis) { return axis == 0 ? 1 : 0; }

static void exact_solution(double xi, double eta, double zeta, double out[5])
{
    for (int m = 0; m < 5; m++)
        out[m] = ce[m][0] + xi * (ce[m][1] + xi * (ce[m][4] + xi * (ce[m][7] + xi * ce[m][10]))) +
                 eta * (ce[m][2] + eta * (ce[m][5] + eta * (ce[m][8] + eta * ce[m][11]))) +
                 zeta * (ce[m][3] + zeta * (ce[m][6] + zeta * (ce[m][9] + zeta * ce[m][12])));
}

/* A line along `axis` crosses cells when the cell does not hold the whole
 * interior of it. */
static inline bool crosses_cells(const bt_problem *p, const bt_cell *c, int axis)
{
    return first_interior(c, axis) > 1 || last_interior(c, axis, p->n) < p->n - 2;
}

int bt_problem_init(bt_problem *p, int n, double dt, bt_layout layout, void *comm)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->dt = dt;
    p->layout = layout;
    p->comm = comm;
    MPI_Comm c = *(MPI_Comm *)comm;
    MPI_Comm_rank(c, &p->rank);
    MPI_Comm_size(c, &p->nranks);
    p->dnm1 = 1.0 / (n - 1);
    p->t1 = 1.0 / (p->dnm1 * p->dnm1); /* tx1 */
    p->t2 = 1.0 / (2.0 * p->dnm1);     /* tx2 */
    p->tt1 = 1.0 / p->dnm1;            /* tx3 */
    int grid[3];
    if (!bt_layout_grid(layout, p->nranks, grid))
        return -1;
    p->cells = malloc(sizeof(bt_cell) * (size_t)grid[2]);
    if (!p->cells)
        return -1;
    p->ncells = bt_cells_of(layout, n, p->nranks, p->rank, p->cells);
    bool pipelined = false;
    size_t face = 0;
    for (int a = 0; a < 3; a++) {
        p->stage[a] = malloc(sizeof(int) * (size_t)p->ncells);
        if (!p->stage[a])
            return -1;
        /* owned cells in order along the axis (one per slab in multi-partition) */
        int s = 0;
        for (int x = 0; x < grid[a]; x++)
            for (int ci = 0; ci < p->ncells; ci++)
                if (p->cells[ci].coord[a] == x)
                    p->stage[a][s++] = ci;
        for (int ci = 0; ci < p->ncells; ci++) {
            const bt_cell *cl = &p->cells[ci];
            pipelined = pipelined || crosses_cells(p, cl, a);
            size_t f = (size_t)cl->size[outer_axis(a)] * (size_t)cl->size[inner_axis(a)];
            face = f > face ? f : face;
        }
    }
    const bt_cell *last = &p->cells[p->ncells - 1];
    p->points = last->base + (long)last->dim[0] * last->dim[1] * last->dim[2];
    size_t pts = (size_t)p->points;
    if (pipelined) { /* C' of every owned point, kept between the pipelined sweeps */
        p->cprime = malloc(sizeof(double) * 25 * pts);
        p->face_out = malloc(sizeof(double) * 35 * face * (size_t)p->ncells);
        p->face_back = p->face_out + 30 * face * (size_t)p->ncells;
        p->face_in = malloc(sizeof(double) * 30 * (size_t)n);
        if (!p->cprime || !p->face_out || !p->face_in)
            return -1;
    }
    /* face rows in flight (one per row per stage) or halo messages (four per cell and axis) */
    size_t nreq = (size_t)p->ncells * (2 * (size_t)n + 12);
    p->requests = malloc(sizeof(MPI_Request) * nreq);
    p->layer = malloc(sizeof(MPI_Datatype) * 3 * (size_t)p->ncells);
    p->scratch = malloc(sizeof(double) * 25 * 3 * (size_t)(n + 2)); /* F, N, C' of one line */
    p->u = calloc(pts * 5, sizeof(double));
    p->rhs = calloc(pts * 5, sizeof(double));
    p->forcing = calloc(pts * 5, sizeof(double));
    p->rho_i = calloc(pts, sizeof(double));
    p->us = calloc(pts, sizeof(double));
    p->vs = calloc(pts, sizeof(double));
    p->ws = calloc(pts, sizeof(double));
    p->square = calloc(pts, sizeof(double));
    p->qs = calloc(pts, sizeof(double));
    if (!p->requests || !p->layer || !p->scratch || !p->u || !p->rhs || !p->forcing || !p->rho_i ||
        !p->us || !p->vs || !p->ws || !p->square || !p->qs)
        return -1;
    /* the halo's unit: one stored layer of a cell across an axis, or two
     * when no cell anywhere is thinner (ghost rims included: the neighbour
     * along that axis has the same extent in the other two) */
    p->halo_layers = 2;
    for (int a = 0; a < 3; a++)
        if (grid[a] > 1 && bt_smallest_cell(n, grid[a]) < 2)
            p->halo_layers = 1;
    const int L = p->halo_layers;
    MPI_Datatype *layer = p->layer;
    for (int ci = 0; ci < p->ncells; ci++) {
        const int *d = p->cells[ci].dim;
        MPI_Type_vector(d[1] * d[2], 5 * L, 5 * d[0], MPI_DOUBLE, &layer[3 * ci]);
        MPI_Type_vector(d[2], 5 * d[0] * L, 5 * d[0] * d[1], MPI_DOUBLE, &layer[3 * ci + 1]);
        MPI_Type_contiguous(5 * d[0] * d[1] * L, MPI_DOUBLE, &layer[3 * ci + 2]);
        for (int a = 0; a < 3; a++)
            MPI_Type_commit(&layer[3 * ci + a]);
    }
    return 0;
}

void bt_problem_free(bt_problem *p)
{
    if (p->layer && p->halo_layers) /* set just before the types are made */
        for (int t = 0; t < 3 * p->ncells; t++)
            MPI_Type_free(&((MPI_Datatype *)p->layer)[t]);
    free(p->layer);
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
    free(p->face_out);
    free(p->face_in);
    free(p->requests);
    for (int a = 0; a < 3; a++)
        free(p->stage[a]);
    free(p->cells);
    memset(p, 0, sizeof *p);
}

/* Every owned point of a cell, boundaries included. */
#define FOR_OWNED(c, i, j, k)                                                       \
    for (int k = (c)->lo[2]; k < (c)->lo[2] + (c)->size[2]; k++)                  \
        for (int j = (c)->lo[1]; j < (c)->lo[1] + (c)->size[1]; j++)              \
            for (int i = (c)->lo[0]; i < (c)->lo[0] + (c)->size[0]; i++)
/* Every owned point of the global interior. */
#define FOR_INTERIOR(p, c, i, j, k)                                                   \
    for (int k = first_interior(c, 2); k <= last_interior(c, 2, (p)->n); k++)       \
        for (int j = first_interior(c, 1); j <= last_interior(c, 1, (p)->n); j++)   \
            for (int i = first_interior(c, 0); i <= last_interior(c, 0, (p)->n); i++)

void bt_initialize(bt_problem *p)
{
    const int n = p->n;
    const double h = p->dnm1;
    for (long q = 0; q < p->points * 5; q++)
        p->u[q] = 1.0;
    for (int ci = 0; ci < p->ncells; ci++) {
        const bt_cell *c = &p->cells[ci];
        FOR_OWNED(c, i, j, k) {
            double xi = i * h, eta = j * h, zeta = k * h, face[6][5];
            exact_solution(0.0, eta, zeta, face[0]);
            exact_solution(1.0, eta, zeta, face[1]);
            exact_solution(xi, 0.0, zeta, face[2]);
            exact_solution(xi, 1.0, zeta, face[3]);
            exact_solution(xi, eta, 0.0, face[4]);
            exact_solution(xi, eta, 1.0, face[5]);
            double *u = &p->u[bt_at(c, i, j, k) * 5];
            for (int m = 0; m < 5; m++) {
                double px = xi * face[1][m] + (1.0 - xi) * face[0][m];
                double py = eta * face[3][m] + (1.0 - eta) * face[2][m];
                double pz = zeta * face[5][m] + (1.0 - zeta) * face[4][m];
                u[m] = px + py + pz - px * py - px * pz - py * pz + px * py * pz;
            }
        }
        /* the six boundary planes take the exact solution */
        FOR_OWNED(c, i, j, k) {
            if (i && j && k && i != n - 1 && j != n - 1 && k != n - 1)
                continue;
            exact_solution(i * h, j * h, k * h, &p->u[bt_at(c, i, j, k) * 5]);
        }
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
    memset(p->forcing, 0, sizeof(double) * 5 * (size_t)p->points);
    double *ue = malloc(sizeof(double) * 5 * n), *buf = malloc(sizeof(double) * 5 * n),
           *cuf = malloc(sizeof(double) * n), *q = malloc(sizeof(double) * n);
    for (int ci = 0; ci < p->ncells; ci++) {
        const bt_cell *cell = &p->cells[ci];
        for (int axis = 0; axis < 3; axis++) {
            const direction d = dir_of(axis);
            const int a = d.normal, oa = outer_axis(axis), ia = inner_axis(axis);
            const double dt1 = d.d * t1;
            /* every line through the cell is evaluated whole (the exact
             * solution is known everywhere) and kept where the cell is */
            for (int b = first_interior(cell, oa); b <= last_interior(cell, oa, n); b++)
                for (int c = first_interior(cell, ia); c <= last_interior(cell, ia, n); c++) {
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
                    for (int s = first_interior(cell, axis); s <= last_interior(cell, axis, n); s++) {
                        int i, j, k;
                        line_point(axis, s, b, c, &i, &j, &k);
                        double *fo = &p->forcing[bt_at(cell, i, j, k) * 5];
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
        FOR_INTERIOR(p, cell, i, j, k)
            for (int m = 0; m < 5; m++)
                p->forcing[bt_at(cell, i, j, k) * 5 + m] *= -1.0;
    }
    free(ue);
    free(buf);
    free(cuf);
    free(q);
}

/* Two ghost layers on every face that has a neighbouring cell: both in one
 * message when every cell is at least two points thick, else in two rounds
 * of one layer, the second sending the layer one further in, which for a
 * slab of one plane is what the first round brought from the other side.  Edge and corner ghosts are not needed
 * (every stencil runs along one axis). */
static void exchange_halo(bt_problem *p)
{
    if (p->nranks == 1)
        return;
    MPI_Comm comm = *(MPI_Comm *)p->comm;
    MPI_Request *req = p->requests;
    const MPI_Datatype *layer = p->layer;
    int grid[3];
    bt_layout_grid(p->layout, p->nranks, grid);
    const int all_cells = grid[0] * grid[1] * grid[2];
    const long base_tag = 8L * (p->n + 1); /* above the line solves' tags */
    const int layers = p->halo_layers, rounds = layers == 2 ? 1 : 2;
    for (int round = 1; round <= rounds; round++) {
        int nreq = 0;
        for (int ci = 0; ci < p->ncells; ci++) {
            const bt_cell *c = &p->cells[ci];
            const int id = c->coord[0] + grid[0] * (c->coord[1] + grid[1] * c->coord[2]);
            for (int a = 0; a < 3; a++) {
                const long s = stride_of(c, a);
                const int lo = c->lo[a], hi = c->lo[a] + c->size[a]; /* stored index of lo is 2 */
                /* tags name the receiving cell and which face it fills */
                const long id_next = id + (a == 0 ? 1 : a == 1 ? grid[0] : (long)grid[0] * grid[1]);
                const long id_prev = 2 * id - id_next;
#define LAYER(x) (&p->u[5 * (c->base + ((long)(x) - lo + 2) * s)])
#define TAG(cell, face) ((int)(base_tag + ((round - 1) * 6 + 2 * a + (face)) * (long)all_cells + (cell)))
                /* first layer of each transfer: both at once, or one per round */
                const int from_prev = layers == 2 ? lo - 2 : lo - round,
                          to_prev = layers == 2 ? lo : lo + round - 1,
                          from_next = layers == 2 ? hi : hi + round - 1,
                          to_next = layers == 2 ? hi - 2 : hi - round;
                if (c->prev[a] >= 0) {
                    MPI_Irecv(LAYER(from_prev), 1, layer[3 * ci + a], c->prev[a], TAG(id, 0), comm,
                              &req[nreq++]);
                    MPI_Isend(LAYER(to_prev), 1, layer[3 * ci + a], c->prev[a], TAG(id_prev, 1), comm,
                              &req[nreq++]);
                }
                if (c->next[a] >= 0) {
                    MPI_Irecv(LAYER(from_next), 1, layer[3 * ci + a], c->next[a], TAG(id, 1), comm,
                              &req[nreq++]);
                    MPI_Isend(LAYER(to_next), 1, layer[3 * ci + a], c->next[a], TAG(id_next, 0), comm,
                              &req[nreq++]);
                }
#undef LAYER
#undef TAG
            }
        }
        bt_wait_all(nreq, req);
    }
}

void bt_compute_rhs(bt_problem *p)
{
    const int n = p->n;
    const double t1 = p->t1, t2 = p->t2, t3 = p->tt1, dt = p->dt;
    const double c3c4t3 = c3 * c4 * t3;
    const double con2 = c3c4t3 * t3, con3 = c3c4t3 * (1.0 - c1 * c5) * t3,
                 con4 = c3c4t3 * CON16 * t3, con5 = c3c4t3 * c1 * c5 * t3, dssp = 0.25;
    exchange_halo(p);
    /* derived quantities on every stored point (ghosts outside the grid
     * hold u = 1, so they stay finite) */
    for (long q = 0; q < p->points; q++) {
        const double *u = &p->u[5 * q];
        double r = 1.0 / u[0];
        p->rho_i[q] = r;
        p->us[q] = u[1] * r;
        p->vs[q] = u[2] * r;
        p->ws[q] = u[3] * r;
        p->square[q] = 0.5 * (u[1] * u[1] + u[2] * u[2] + u[3] * u[3]) * r;
        p->qs[q] = p->square[q] * r;
    }
    memcpy(p->rhs, p->forcing, sizeof(double) * 5 * (size_t)p->points);
    const double *vel[4] = {NULL, p->us, p->vs, p->ws};
    for (int ci = 0; ci < p->ncells; ci++) {
        const bt_cell *cell = &p->cells[ci];
        for (int axis = 0; axis < 3; axis++) {
            const direction d = dir_of(axis);
            const long s = stride_of(cell, axis);
            const int a = d.normal;
            const double dt1 = d.d * t1;
            const double *va = vel[a];
            FOR_INTERIOR(p, cell, i, j, k) {
                const long q = bt_at(cell, i, j, k), qp = q + s, qm = q - s;
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
        FOR_INTERIOR(p, cell, i, j, k)
            for (int m = 0; m < 5; m++)
                p->rhs[bt_at(cell, i, j, k) * 5 + m] *= dt;
    }
}

#include "bt_blocks.h"

/* The lines of one direction, cell by cell in the order the cells lie
 * along it (§1.9's stages).  A line wholly inside a cell is eliminated and
 * back-substituted at once with its C' in scratch.  A line crossing cells
 * is pipelined: forward, a cell takes C' and r of the point before it from
 * the previous cell's owner and hands its last point's on, one row of
 * lines per message (so the next owner starts on row 1 while this one
 * works on row 2); backward runs the stages in reverse and hands the
 * solution of each cell's first point back.  Sends are nonblocking into a
 * buffer per stage: in multi-partition every rank sends in stage 1 to a
 * rank that receives only in stage 2.  rhs holds the solution after. */
static void line_solve(bt_problem *p, int axis)
{
    const int n = p->n, oa = outer_axis(axis), ia = inner_axis(axis);
    const direction d = dir_of(axis);
    const double t1 = p->dt * p->t1, t2 = p->dt * p->t2, diag = t1 * d.d;
    MPI_Comm comm = *(MPI_Comm *)p->comm;
    MPI_Request *req = p->requests;
    block *F = (block *)p->scratch, *N = F + (n + 2), *Cl = N + (n + 2);
#define CPRIME(q) ((block *)&p->cprime[25 * (q)])
#define TAG(phase, row) ((2 * axis + (phase)) * (n + 1) + (row))
    /* forward sends are complete at the end of the forward sweep; the
     * solution sent back is received only in the other rank's backward
     * sweep, so those requests are completed at the end of it */
    int nreq = 0, nback = 0;
    MPI_Request *back_req = req + (size_t)p->ncells * n;
    double *out = p->face_out, *back = p->face_back;
    for (int st = 0; st < p->ncells; st++) {
        const bt_cell *c = &p->cells[p->stage[axis][st]];
        const int f = first_interior(c, axis), l = last_interior(c, axis, n);
        const int b0 = first_interior(c, oa), b1 = last_interior(c, oa, n);
        const int c0 = first_interior(c, ia), c1_ = last_interior(c, ia, n);
        if (f > l || b0 > b1 || c0 > c1_)
            continue;
        /* the last cell of a line back-substitutes at once, C' still in
         * cache, and hands the solution of its first point back */
        const bool from_prev = f > 1, to_next = l < n - 2, at_once = !to_next;
        const long st_ = stride_of(c, axis);
        const int width = c1_ - c0 + 1;
        for (int b = b0; b <= b1; b++) {
            if (from_prev)
                MPI_Recv(p->face_in, 30 * width, MPI_DOUBLE, c->prev[axis], TAG(0, b), comm,
                         MPI_STATUS_IGNORE);
            for (int cc = c0; cc <= c1_; cc++) {
                int i0, j0, k0;
                line_point(axis, f - 1, b, cc, &i0, &j0, &k0);
                const long first = bt_at(c, i0, j0, k0); /* point f-1 of this line */
                for (int s = 0; s <= l - f + 2; s++)
                    bt_jacobians(&p->u[5 * (first + s * st_)], d.normal, F[s], N[s]);
                const double *in = &p->face_in[30 * (cc - c0)];
                block *Cprev = NULL;
                for (int s = 1; s <= l - f + 1; s++) {
                    block A, B;
                    const long q = first + s * st_;
                    double *r = &p->rhs[5 * q];
                    block *C = at_once ? &Cl[s] : CPRIME(q);
                    bt_build_row(F[s - 1], N[s - 1], N[s], F[s + 1], N[s + 1], t1, t2, diag, A, B, *C);
                    if (f + s - 1 == 1) /* point 0 is a boundary: r = 0, C' = 0 there */
                        bt_solve_block(B, *C, r);
                    else if (s == 1) /* the previous point lives in the previous cell */
                        bt_eliminate(A, B, (const double(*)[5])in, in + 25, *C, r);
                    else
                        bt_eliminate(A, B, *Cprev, r - 5 * st_, *C, r);
                    Cprev = C;
                }
                if (to_next) {
                    double *o = &out[30 * (cc - c0)];
                    const long q = first + (l - f + 1) * st_;
                    memcpy(o, CPRIME(q), 25 * sizeof(double));
                    memcpy(o + 25, &p->rhs[5 * q], 5 * sizeof(double));
                }
                if (at_once) { /* the last interior point is next to the boundary: r = 0 there */
                    for (int s = l - f; s >= 1; s--) {
                        double *r = &p->rhs[5 * (first + s * st_)];
                        bt_back_substitute(Cl[s], r + 5 * st_, r);
                    }
                    if (from_prev)
                        memcpy(&back[5 * (cc - c0)], &p->rhs[5 * (first + st_)], 5 * sizeof(double));
                }
            }
            if (to_next) {
                MPI_Isend(out, 30 * width, MPI_DOUBLE, c->next[axis], TAG(0, b), comm, &req[nreq++]);
                out += 30 * width;
            }
            if (at_once && from_prev) {
                MPI_Isend(back, 5 * width, MPI_DOUBLE, c->prev[axis], TAG(1, b), comm, &back_req[nback++]);
                back += 5 * width;
            }
        }
    }
    bt_wait_all(nreq, req);
    nreq = 0;
    for (int st = p->ncells - 1; st >= 0; st--) {
        const bt_cell *c = &p->cells[p->stage[axis][st]];
        const int f = first_interior(c, axis), l = last_interior(c, axis, n);
        const int b0 = first_interior(c, oa), b1 = last_interior(c, oa, n);
        const int c0 = first_interior(c, ia), c1_ = last_interior(c, ia, n);
        if (f > l || b0 > b1 || c0 > c1_)
            continue;
        const bool from_prev = f > 1, to_next = l < n - 2;
        if (!to_next)
            continue; /* solved above */
        const long st_ = stride_of(c, axis);
        const int width = c1_ - c0 + 1;
        for (int b = b0; b <= b1; b++) {
            MPI_Recv(p->face_in, 5 * width, MPI_DOUBLE, c->next[axis], TAG(1, b), comm,
                     MPI_STATUS_IGNORE);
            for (int cc = c0; cc <= c1_; cc++) {
                int i0, j0, k0;
                line_point(axis, f, b, cc, &i0, &j0, &k0);
                const long first = bt_at(c, i0, j0, k0); /* point f */
                for (int s = l - f; s >= 0; s--) {
                    const long q = first + s * st_;
                    double *r = &p->rhs[5 * q];
                    if (s < l - f)
                        bt_back_substitute(*CPRIME(q), r + 5 * st_, r);
                    else /* the point after lives in the next cell */
                        bt_back_substitute(*CPRIME(q), &p->face_in[5 * (cc - c0)], r);
                }
                if (from_prev)
                    memcpy(&back[5 * (cc - c0)], &p->rhs[5 * first], 5 * sizeof(double));
            }
            if (from_prev) {
                MPI_Isend(back, 5 * width, MPI_DOUBLE, c->prev[axis], TAG(1, b), comm, &back_req[nback++]);
                back += 5 * width;
            }
        }
    }
    bt_wait_all(nback, back_req);
#undef CPRIME
#undef TAG
}

void bt_step(bt_problem *p)
{
    bt_compute_rhs(p);
    for (int axis = 0; axis < 3; axis++)
        line_solve(p, axis);
    for (int ci = 0; ci < p->ncells; ci++) {
        const bt_cell *c = &p->cells[ci];
        FOR_INTERIOR(p, c, i, j, k)
            for (int m = 0; m < 5; m++)
                p->u[bt_at(c, i, j, k) * 5 + m] += p->rhs[bt_at(c, i, j, k) * 5 + m];
    }
}

static void add_error(const double *u, int i, int j, int k, double h, double sum[5])
{
    double e[5];
    exact_solution(i * h, j * h, k * h, e);
    for (int m = 0; m < 5; m++) {
        double diff = u[m] - e[m];
        sum[m] += diff * diff;
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
    for (int ci = 0; ci < p->ncells; ci++) {
        const bt_cell *c = &p->cells[ci];
        FOR_OWNED(c, i, j, k)
            add_error(&p->u[5 * bt_at(c, i, j, k)], i, j, k, p->dnm1, mine);
    }
    MPI_Allreduce(mine, all, 5, MPI_DOUBLE, MPI_SUM, *(MPI_Comm *)p->comm);
    finish_norm(p->n, all, 1.0, xce);
}

void bt_error_norm_of(int n, const double *u, double xce[5])
{
    double sum[5] = {0};
    const double h = 1.0 / (n - 1);
    for (int k = 0; k < n; k++)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++)
                add_error(&u[(((long)k * n + j) * n + i) * 5], i, j, k, h, sum);
    finish_norm(n, sum, 1.0, xce);
}

void bt_residual_norm(bt_problem *p, double xcr[5])
{
    bt_compute_rhs(p);
    double mine[5] = {0}, all[5];
    for (int ci = 0; ci < p->ncells; ci++) {
        const bt_cell *c = &p->cells[ci];
        FOR_INTERIOR(p, c, i, j, k)
            for (int m = 0; m < 5; m++) {
                double v = p->rhs[bt_at(c, i, j, k) * 5 + m];
                mine[m] += v * v;
            }
    }
    MPI_Allreduce(mine, all, 5, MPI_DOUBLE, MPI_SUM, *(MPI_Comm *)p->comm);
    finish_norm(p->n, all, p->dt, xcr);
}

double bt_mops(int n, int steps, double seconds)
{
    double n3 = (double)n * n * n, navg = n;
    return seconds > 0 ? 1e-6 * steps * (3478.8 * n3 - 17655.7 * navg * navg + 28023.7 * navg) / seconds
                       : 0;
}
