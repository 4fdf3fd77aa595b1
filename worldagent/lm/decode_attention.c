/* Attention for one query token a row against a KV cache, on the CPU.
 *
 * Built and loaded by worldagent/lm/decode_attention.py (see its doc for why). For each row b and
 * key/value head h, the G query heads that share h read the cache's columns once:
 *   pass 1: scores s[g][l] = scale * q[g] . k[l] for the columns the mask keeps,
 *   pass 2: p = exp(s - max), and their sum,
 *   pass 3: out[g] = sum_l p[g][l] * v[l] / sum.
 * Everything is accumulated in float32; a bfloat16 output is rounded to nearest even once.
 *
 * Layout: q and out are (B, KV*G, D) contiguous; k and v are addressed by element strides
 * (row, head, column), the D values of a column contiguous; mask is (B, L) bytes with a row stride,
 * or NULL (every column kept). A column whose mask byte is 0 adds nothing; a row with no column
 * kept gets zeros.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GROUP 16
#define MAX_HEAD_DIM 256
#define MASKED (-1e30f) /* not -inf: built with -ffast-math, which assumes finite values */

static inline float bf16_to_f32(uint16_t v) {
    uint32_t u = (uint32_t)v << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint16_t f32_to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 64); /* NaN stays NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline int kept(const uint8_t *mask, long l) { return mask == NULL || mask[l] != 0; }

/* Where a row's loops start: its first kept column, rounded down to a multiple of 64 so that the
 * vectorised sums of the softmax keep their lanes (the columns skipped before it add exact zeros). */
static inline long first_column(const uint8_t *mask, long L) {
    long first = 0;
    if (mask != NULL)
        while (first < L && mask[first] == 0) first++;
    return first & ~63L;
}

/* One past a row's last kept column (0 when it keeps none): a short row of a batch skips the columns
 * after its own on tiles (its scores there are masked, its loops check the mask bytes alone). */
static inline long end_column(const uint8_t *mask, long L) {
    long end = L;
    if (mask != NULL)
        while (end > 0 && mask[end - 1] == 0) end--;
    return end;
}

/* Each column is asked for this many columns ahead (8, 16, 32 and 64 measured: 32 and 64 best): the
 * hardware's own prefetcher stops at every 4 KiB page, 32 columns of a bfloat16 head of 64. */
#define PREFETCH_COLUMNS 32
static inline void prefetch_column(const void *column, long bytes) {
    for (long at = 0; at < bytes; at += 64) __builtin_prefetch((const char *)column + at, 0, 3);
}

/* Passes 2 and 3 are shared by both precisions: scores (G rows of L) -> probabilities, in place. */
static void softmax_rows(float *scores, long first, long L, int G, float *sums) {
    for (int g = 0; g < G; g++) {
        float *row = scores + (long)g * L;
        float top = MASKED;
        for (long l = first; l < L; l++) top = row[l] > top ? row[l] : top;
        float sum = 0.f;
        if (top > MASKED) {
            for (long l = first; l < L; l++) {
                float p = expf(row[l] - top);
                row[l] = p;
                sum += p;
            }
        } else {
            memset(row + first, 0, sizeof(float) * (L - first));
        }
        sums[g] = sum;
    }
}


/* The head size is a constant in each inlined copy (64, 128, 256, or any other), so that the loops
 * over it vectorise and unroll. */
#define INLINE static inline __attribute__((always_inline))

/* Passes 2 and 3, and the output: probabilities (G rows of L) times the value columns. */
#define WEIGHTED_VALUES(T, TO_F32, STORE)                                                                  \
    float sums[MAX_GROUP];                                                                                 \
    softmax_rows(scores, first, L, G, sums);                                                               \
    float acc[MAX_GROUP][MAX_HEAD_DIM];                                                                    \
    for (int g = 0; g < G; g++) memset(acc[g], 0, sizeof(float) * D);                                     \
    float column[MAX_HEAD_DIM];                                                                            \
    for (long l = first; l < L; l++) {                                                                     \
        if (!kept(mask, l)) continue;                                                                      \
        const T *row = v + l * vsl;                                                                        \
        prefetch_column(row + PREFETCH_COLUMNS * vsl, (long)sizeof(T) * D);                                \
        for (int d = 0; d < D; d++) column[d] = TO_F32(row[d]);                                            \
        for (int g = 0; g < G; g++) {                                                                      \
            const float p = scores[(long)g * L + l];                                                       \
            for (int d = 0; d < D; d++) acc[g][d] += p * column[d];                                        \
        }                                                                                                  \
    }                                                                                                      \
    for (int g = 0; g < G; g++) {                                                                          \
        const float norm = sums[g] > 0.f ? 1.f / sums[g] : 0.f;                                            \
        for (int d = 0; d < D; d++) out[(long)g * D + d] = STORE(acc[g][d] * norm);                        \
    }

/* Pass 1: the query (scaled) and each key column converted to float32 once. */
#define SCORES(T, TO_F32)                                                                            \
    {                                                                                                      \
        float query[MAX_GROUP][MAX_HEAD_DIM], column[MAX_HEAD_DIM];                                        \
        for (int g = 0; g < G; g++)                                                                        \
            for (int d = 0; d < D; d++) query[g][d] = TO_F32(q[(long)g * D + d]) * scale;                  \
        for (long l = first; l < L; l++) {                                                                 \
            if (!kept(mask, l)) {                                                                          \
                for (int g = 0; g < G; g++) scores[(long)g * L + l] = MASKED;                              \
                continue;                                                                                  \
            }                                                                                              \
            const T *row = k + l * ksl;                                                                    \
            prefetch_column(row + PREFETCH_COLUMNS * ksl, (long)sizeof(T) * D);                            \
            for (int d = 0; d < D; d++) column[d] = TO_F32(row[d]);                                        \
            for (int g = 0; g < G; g++) {                                                                  \
                float dot = 0.f;                                                                           \
                for (int d = 0; d < D; d++) dot += query[g][d] * column[d];                                \
                scores[(long)g * L + l] = dot;                                                             \
            }                                                                                              \
        }                                                                                                  \
    }

static inline float same(float x) { return x; }

INLINE void head_bf16(const uint16_t *q, const uint16_t *k, const uint16_t *v, long ksl, long vsl,
                      const uint8_t *mask, long L, int G, const int D, float scale, uint16_t *out, float *scores) {
    const long first = first_column(mask, L);
    SCORES(uint16_t, bf16_to_f32)
    WEIGHTED_VALUES(uint16_t, bf16_to_f32, f32_to_bf16)
}

INLINE void head_f32(const float *q, const float *k, const float *v, long ksl, long vsl, const uint8_t *mask,
                     long L, int G, const int D, float scale, float *out, float *scores) {
    const long first = first_column(mask, L);
    SCORES(float, same)
    WEIGHTED_VALUES(float, same, same)
}

#define BY_HEAD_SIZE(NAME, IMPL, T)                                                                        \
    static void NAME(const T *q, const T *k, const T *v, long ksl, long vsl, const uint8_t *mask, long L,  \
                     int G, int D, float scale, T *out, float *scores) {                                   \
        switch (D) {                                                                                       \
        case 64: IMPL(q, k, v, ksl, vsl, mask, L, G, 64, scale, out, scores); break;                       \
        case 128: IMPL(q, k, v, ksl, vsl, mask, L, G, 128, scale, out, scores); break;                     \
        case 256: IMPL(q, k, v, ksl, vsl, mask, L, G, 256, scale, out, scores); break;                     \
        default: IMPL(q, k, v, ksl, vsl, mask, L, G, D, scale, out, scores);                               \
        }                                                                                                  \
    }

BY_HEAD_SIZE(one_head_bf16, head_bf16, uint16_t)
BY_HEAD_SIZE(one_head_f32, head_f32, float)

void decode_attention_limits(int *max_group, int *max_head_dim) {
    *max_group = MAX_GROUP;
    *max_head_dim = MAX_HEAD_DIM;
}

/* Returns 0, or -1 when the scratch memory could not be had (out is then unwritten). */
#define DECODE_ATTENTION(NAME, T, ONE_HEAD)                                                                       \
    int NAME(const T *q, const T *k, const T *v, long ksb, long ksh, long ksl, long vsb, long vsh, long vsl,     \
             const uint8_t *mask, long msb, int B, int KV, int G, int D, long L, float scale, T *out, int threads) { \
        int failed = 0;                                                                                          \
        _Pragma("omp parallel num_threads(threads) reduction(| : failed)") {                                     \
            float *scores = malloc(sizeof(float) * (size_t)(L > 0 ? L : 1) * (size_t)G);                         \
            failed = scores == NULL;                                                                             \
            _Pragma("omp for schedule(static)") for (int i = 0; i < B * KV; i++) {                               \
                if (scores == NULL) continue;                                                                    \
                const int b = i / KV, h = i % KV;                                                                \
                ONE_HEAD(q + (long)i * G * D, k + b * ksb + h * ksh, v + b * vsb + h * vsh, ksl, vsl,            \
                         mask ? mask + b * msb : NULL, L, G, D, scale, out + (long)i * G * D, scores);           \
            }                                                                                                    \
            free(scores);                                                                                        \
        }                                                                                                        \
        return failed ? -1 : 0;                                                                                  \
    }

DECODE_ATTENTION(portable_bf16, uint16_t, one_head_bf16)
DECODE_ATTENTION(decode_attention_f32, float, one_head_f32)

/* Rows that share their first columns: the samples of one prompt (the same prompt's keys and values
 * at the same columns of each row's cache). The kernel above reads those columns once a row; here a
 * group's rows read them once for all of them, then each row its own columns after them. Every query
 * still sums over its columns in the same order, with the same per-column arithmetic, as above.
 *
 * rows lists the batch's rows group by group, starts[g] where group g begins (starts[groups] = B);
 * shared[g] how many leading columns the rows of group g share (read from its first row, rows[starts[g]];
 * their mask bytes there must be the same too). A group with more rows than MAX_SHARED_QUERIES / G is
 * taken in chunks, each reading the shared columns once.
 *
 * kv (or NULL: row b's own) maps each query row to the cache row it reads: a row's drafted tokens
 * (speculative decoding) are query rows of their own over one cache row. Queries, masks and outputs
 * stay indexed by query row. */
#define MAX_SHARED_QUERIES 64
#define KV_ROW(kv, row) ((long)((kv) != NULL ? (kv)[row] : (row)))

void decode_attention_shared_limits(int *max_queries) { *max_queries = MAX_SHARED_QUERIES; }

/* The first column any of the n rows keeps, rounded down as first_column does. */
static inline long group_first_column(const uint8_t *mask, long msb, const int *rows, int n, long L) {
    long first = L;
    for (int i = 0; i < n; i++) {
        long own = first_column(mask ? mask + rows[i] * msb : NULL, L);
        first = own < first ? own : first;
    }
    return first;
}

#define GROUP_HEAD(NAME, T, TO_F32, STORE)                                                                 \
    INLINE void NAME(const T *q, long qsr, const T *k, long ksb, long ksl, const T *v, long vsb, long vsl,   \
                     const uint8_t *mask, long msb, int lead, const int *rows, int n, long shared, long L,    \
                     int G, const int D, float scale, T *out, float *scores, const int *kv) {                \
        const int NQ = n * G;                                                                                \
        const long first = group_first_column(mask, msb, rows, n, L);                                        \
        const long split = shared < first ? first : (shared > L ? L : shared);                               \
        const uint8_t *lead_mask = mask ? mask + lead * msb : NULL;                                          \
        const T *lead_k = k + KV_ROW(kv, lead) * ksb, *lead_v = v + KV_ROW(kv, lead) * vsb;                   \
        float query[MAX_SHARED_QUERIES][MAX_HEAD_DIM], column[MAX_HEAD_DIM];                                 \
        for (int i = 0; i < n; i++)                                                                          \
            for (int g = 0; g < G; g++)                                                                      \
                for (int d = 0; d < D; d++) query[i * G + g][d] = TO_F32(q[rows[i] * qsr + (long)g * D + d]) * scale; \
        /* pass 1: the shared columns once, then each row's own */                                         \
        for (long l = first; l < split; l++) {                                                               \
            if (!kept(lead_mask, l)) {                                                                       \
                for (int j = 0; j < NQ; j++) scores[(long)j * L + l] = MASKED;                               \
                continue;                                                                                    \
            }                                                                                                \
            const T *row = lead_k + l * ksl;                                                                 \
            prefetch_column(row + PREFETCH_COLUMNS * ksl, (long)sizeof(T) * D);                              \
            for (int d = 0; d < D; d++) column[d] = TO_F32(row[d]);                                          \
            for (int j = 0; j < NQ; j++) {                                                                   \
                float dot = 0.f;                                                                             \
                for (int d = 0; d < D; d++) dot += query[j][d] * column[d];                                  \
                scores[(long)j * L + l] = dot;                                                               \
            }                                                                                                \
        }                                                                                                    \
        for (int i = 0; i < n; i++) {                                                                        \
            const uint8_t *own_mask = mask ? mask + rows[i] * msb : NULL;                                    \
            const T *own_k = k + KV_ROW(kv, rows[i]) * ksb;                                                    \
            for (long l = split; l < L; l++) {                                                               \
                if (!kept(own_mask, l)) {                                                                    \
                    for (int g = 0; g < G; g++) scores[(long)(i * G + g) * L + l] = MASKED;                  \
                    continue;                                                                                \
                }                                                                                            \
                const T *row = own_k + l * ksl;                                                              \
                for (int d = 0; d < D; d++) column[d] = TO_F32(row[d]);                                      \
                for (int g = 0; g < G; g++) {                                                                \
                    float dot = 0.f;                                                                         \
                    for (int d = 0; d < D; d++) dot += query[i * G + g][d] * column[d];                      \
                    scores[(long)(i * G + g) * L + l] = dot;                                                 \
                }                                                                                            \
            }                                                                                                \
        }                                                                                                    \
        /* passes 2 and 3: the shared values once, then each row's own */                                  \
        float sums[MAX_SHARED_QUERIES];                                                                      \
        softmax_rows(scores, first, L, NQ, sums);                                                            \
        float acc[MAX_SHARED_QUERIES][MAX_HEAD_DIM];                                                         \
        for (int j = 0; j < NQ; j++) memset(acc[j], 0, sizeof(float) * D);                                  \
        for (long l = first; l < split; l++) {                                                               \
            if (!kept(lead_mask, l)) continue;                                                               \
            const T *row = lead_v + l * vsl;                                                                 \
            prefetch_column(row + PREFETCH_COLUMNS * vsl, (long)sizeof(T) * D);                              \
            for (int d = 0; d < D; d++) column[d] = TO_F32(row[d]);                                          \
            for (int j = 0; j < NQ; j++) {                                                                   \
                const float p = scores[(long)j * L + l];                                                     \
                for (int d = 0; d < D; d++) acc[j][d] += p * column[d];                                      \
            }                                                                                                \
        }                                                                                                    \
        for (int i = 0; i < n; i++) {                                                                        \
            const uint8_t *own_mask = mask ? mask + rows[i] * msb : NULL;                                    \
            const T *own_v = v + KV_ROW(kv, rows[i]) * vsb;                                                    \
            for (long l = split; l < L; l++) {                                                               \
                if (!kept(own_mask, l)) continue;                                                            \
                const T *row = own_v + l * vsl;                                                              \
                for (int d = 0; d < D; d++) column[d] = TO_F32(row[d]);                                      \
                for (int g = 0; g < G; g++) {                                                                \
                    const float p = scores[(long)(i * G + g) * L + l];                                       \
                    for (int d = 0; d < D; d++) acc[i * G + g][d] += p * column[d];                          \
                }                                                                                            \
            }                                                                                                \
        }                                                                                                    \
        for (int i = 0; i < n; i++)                                                                          \
            for (int g = 0; g < G; g++) {                                                                    \
                const int j = i * G + g;                                                                     \
                const float norm = sums[j] > 0.f ? 1.f / sums[j] : 0.f;                                      \
                for (int d = 0; d < D; d++) out[rows[i] * qsr + (long)g * D + d] = STORE(acc[j][d] * norm);  \
            }                                                                                                \
    }

GROUP_HEAD(group_head_bf16, uint16_t, bf16_to_f32, f32_to_bf16)
GROUP_HEAD(group_head_f32, float, same, same)

#define GROUP_BY_HEAD_SIZE(NAME, IMPL, T)                                                                  \
    static void NAME(const T *q, long qsr, const T *k, long ksb, long ksl, const T *v, long vsb, long vsl,   \
                     const uint8_t *mask, long msb, int lead, const int *rows, int n, long shared, long L, int G, \
                     int D, float scale, T *out, float *scores, const int *kv) {                             \
        switch (D) {                                                                                         \
        case 64: IMPL(q, qsr, k, ksb, ksl, v, vsb, vsl, mask, msb, lead, rows, n, shared, L, G, 64, scale, out, scores, kv); break; \
        case 128: IMPL(q, qsr, k, ksb, ksl, v, vsb, vsl, mask, msb, lead, rows, n, shared, L, G, 128, scale, out, scores, kv); break; \
        case 256: IMPL(q, qsr, k, ksb, ksl, v, vsb, vsl, mask, msb, lead, rows, n, shared, L, G, 256, scale, out, scores, kv); break; \
        default: IMPL(q, qsr, k, ksb, ksl, v, vsb, vsl, mask, msb, lead, rows, n, shared, L, G, D, scale, out, scores, kv); \
        }                                                                                                    \
    }

GROUP_BY_HEAD_SIZE(one_group_bf16, group_head_bf16, uint16_t)
GROUP_BY_HEAD_SIZE(one_group_f32, group_head_f32, float)

/* The plain kernel's arguments, then the groups. Returns 0, -1 when the scratch memory could not be
 * had, -2 when G > MAX_SHARED_QUERIES or the groups do not hold the B rows (out is then unwritten). Work items are (group, head) pairs; a group is taken MAX_SHARED_QUERIES / G rows at a time. */
#define DECODE_ATTENTION_SHARED(NAME, T, ONE_GROUP)                                                              \
    int NAME(const T *q, const T *k, const T *v, long ksb, long ksh, long ksl, long vsb, long vsh, long vsl,     \
             const uint8_t *mask, long msb, int B, int KV, int G, int D, long L, float scale, T *out,            \
             int threads, const int *rows, const int *starts, int groups, const long *shared, const int *kv) {   \
        if (G > MAX_SHARED_QUERIES || starts[groups] != B) return -2;                                            \
        const int chunk = MAX_SHARED_QUERIES / G;                                                                \
        const long qsr = (long)KV * G * D;                                                                       \
        int failed = 0;                                                                                          \
        _Pragma("omp parallel num_threads(threads) reduction(| : failed)") {                                     \
            float *scores = malloc(sizeof(float) * (size_t)(L > 0 ? L : 1) * (size_t)(chunk * G));               \
            failed = scores == NULL;                                                                             \
            _Pragma("omp for schedule(dynamic)") for (int i = 0; i < groups * KV; i++) {                         \
                if (scores == NULL) continue;                                                                    \
                const int g = i / KV, h = i % KV;                                                                \
                for (int at = starts[g]; at < starts[g + 1]; at += chunk) {                                      \
                    const int n = starts[g + 1] - at < chunk ? starts[g + 1] - at : chunk;                       \
                    ONE_GROUP(q + (long)h * G * D, qsr, k + h * ksh, ksb, ksl, v + h * vsh, vsb, vsl, mask, msb, \
                              rows[starts[g]], rows + at, n, shared[g], L, G, D, scale, out + (long)h * G * D,   \
                              scores, kv);                                                                       \
                }                                                                                                \
            }                                                                                                    \
            free(scores);                                                                                        \
        }                                                                                                        \
        return failed ? -1 : 0;                                                                                  \
    }

DECODE_ATTENTION_SHARED(portable_shared_bf16, uint16_t, one_group_bf16)
DECODE_ATTENTION_SHARED(decode_attention_shared_f32, float, one_group_f32)

/* On a CPU with AMX (Intel's tile units, bfloat16 products summed in float32), a bfloat16 cache's
 * scores are tile products: 16 key columns a tile against up to 16 queries (the G query heads of a row,
 * or of every row in a group), where the loops above do a dot product and a horizontal sum for each
 * query and column and run at a fraction of a core's multiply rate. The scores are kept column-major,
 * 16 lanes a column (lane j: query j), so the softmax and the weighted values run along the lanes.
 * Each lane's score is its own tile element, its softmax and weighted values sum over the columns in
 * column order, so a row's output does not depend on the rows it is decoded beside: a row alone and
 * the same row in a group give the same bits, as above. They are not the loops' bits (the scale is
 * applied after the product; the tile sums in its own order), so the path is chosen once a process
 * (decode_attention_amx) and holds for every bfloat16 call. */
#if defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__AVX512F__)
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LANES 16
#define ARCH_REQ_XCOMP_PERM 0x1023 /* Linux asks a process to request the tiles' state before their first use */
#define XFEATURE_XTILEDATA 18

static int amx_wanted = 1, amx_granted = 0; /* granted: 0 not asked yet, 1 yes, -1 refused */

static int amx_on(void) {
    if (!amx_wanted) return 0;
    if (amx_granted == 0) amx_granted = syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0 ? 1 : -1;
    return amx_granted == 1;
}

/* Tile 0: 16 columns x 16 lanes of float32 scores; tile 1: 16 key columns x 32 bfloat16 of the head;
 * tile 2: the queries' 32 bfloat16 as 16 pairs x 16 lanes (the tile product's pair-interleaved layout). */
typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t bytes[16];
    uint8_t rows[16];
} __attribute__((aligned(64))) tile_config;

static void tiles_start(void) {
    tile_config config;
    memset(&config, 0, sizeof config);
    config.palette = 1;
    for (int t = 0; t < 3; t++) {
        config.rows[t] = 16;
        config.bytes[t] = 64;
    }
    _tile_loadconfig(&config);
}

/* The queries of lanes [0, count) in tile 2's layout, one 16 x 32 block per 32 of the head's D values;
 * the other lanes zero. The scale is not applied here: a bfloat16 query times the scale rounds. */
static void pack_queries(const uint16_t *q, long qsr, const int *rows, int G, int D, int count, uint16_t *packed) {
    memset(packed, 0, sizeof(uint16_t) * (size_t)D * LANES);
    for (int j = 0; j < count; j++) {
        const uint16_t *query = q + rows[j / G] * qsr + (long)(j % G) * D;
        for (int d = 0; d < D; d++) packed[(d / 32) * 512 + ((d % 32) / 2) * 32 + 2 * j + (d & 1)] = query[d];
    }
}

/* Adds to tile 0 the products of `count` (<= 16) key columns from `keys` (column stride ksl) with the
 * packed queries. A short block is copied into zeros first: a tile reads 16 rows. */
static inline void add_block(const uint16_t *keys, long ksl, int count, int D, const uint16_t *packed, uint16_t *tail) {
    long stride = ksl * (long)sizeof(uint16_t);
    if (count < 16) {
        memset(tail, 0, sizeof(uint16_t) * 16 * (size_t)D);
        for (int c = 0; c < count; c++) memcpy(tail + (long)c * D, keys + c * ksl, sizeof(uint16_t) * (size_t)D);
        keys = tail;
        stride = (long)sizeof(uint16_t) * D;
    } else {
        for (int c = 0; c < 16; c++) prefetch_column(keys + (c + PREFETCH_COLUMNS) * ksl, (long)sizeof(uint16_t) * D);
    }
    for (int part = 0; part < D / 32; part++) {
        _tile_loadd(1, keys + 32 * part, stride);
        _tile_loadd(2, packed + 512 * part, 64);
        _tile_dpbf16ps(0, 1, 2);
    }
}

/* e^x on 16 lanes (a few ulp, as the loops' vectorised expf): 2^n * e^r with r = x - n ln 2, a degree-6
 * polynomial on |r| <= ln 2 / 2; exactly 0 below e^-87 (the masked columns). Written out because gcc
 * calls the 8-lane expf twice and meets the halves through memory. */
static inline __m512 exp16(__m512 x) {
    const __mmask16 some = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.0f), _CMP_GE_OQ);
    x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.0f)), _mm512_set1_ps(88.0f));
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.0f / 720);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_maskz_scalef_ps(some, p, n);
}

/* A block of 16 columns' products in tile 0 -> their scaled scores in lanes `lanes` of scores[l * 16]
 * (MASKED where `mask` drops the column), the running maximum `top` of those lanes raised. */
static inline void keep_scores(const float *block, long l, int count, const uint8_t *mask, __mmask16 lanes, float scale,
                               float *scores, __m512 *top) {
    const __m512 masked = _mm512_set1_ps(MASKED), scaled = _mm512_set1_ps(scale);
    for (int c = 0; c < count; c++) {
        const __mmask16 keep = kept(mask, l + c) ? lanes : 0;
        const __m512 score = _mm512_mask_mul_ps(masked, keep, _mm512_load_ps(block + c * LANES), scaled);
        _mm512_mask_store_ps(scores + (l + c) * LANES, lanes, score);
        *top = _mm512_mask_max_ps(*top, lanes, *top, score);
    }
}

static inline __m512 bf16x16(const uint16_t *at) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)at)), 16));
}

/* Weighted values of a 64-wide head for M lanes from `lane` (M constant, so their 4 x M sums stay in
 * registers): acc[j] += p[l][lane + j] * v[l] over the kept columns [from, to), in column order. */
#define WEIGHTED_64(M)                                                                                              \
    static void weighted_64_##M(const uint16_t *v, long vsl, const uint8_t *mask, long from, long to,              \
                                const float *scores, int lane, float *acc) {                                       \
        __m512 sum[M][4];                                                                                          \
        for (int j = 0; j < M; j++)                                                                                \
            for (int r = 0; r < 4; r++) sum[j][r] = _mm512_loadu_ps(acc + j * 64 + r * 16);                        \
        for (long l = from; l < to; l++) {                                                                         \
            if (!kept(mask, l)) continue;                                                                          \
            const uint16_t *column = v + l * vsl;                                                                  \
            prefetch_column(column + PREFETCH_COLUMNS * vsl, 128);                                                 \
            const __m512 c0 = bf16x16(column), c1 = bf16x16(column + 16), c2 = bf16x16(column + 32),               \
                         c3 = bf16x16(column + 48);                                                                \
            for (int j = 0; j < M; j++) {                                                                          \
                const __m512 p = _mm512_set1_ps(scores[l * LANES + lane + j]);                                     \
                sum[j][0] = _mm512_fmadd_ps(p, c0, sum[j][0]);                                                     \
                sum[j][1] = _mm512_fmadd_ps(p, c1, sum[j][1]);                                                     \
                sum[j][2] = _mm512_fmadd_ps(p, c2, sum[j][2]);                                                     \
                sum[j][3] = _mm512_fmadd_ps(p, c3, sum[j][3]);                                                     \
            }                                                                                                      \
        }                                                                                                          \
        for (int j = 0; j < M; j++)                                                                                \
            for (int r = 0; r < 4; r++) _mm512_storeu_ps(acc + j * 64 + r * 16, sum[j][r]);                        \
    }
WEIGHTED_64(1)
WEIGHTED_64(2)
WEIGHTED_64(3)
WEIGHTED_64(4)
WEIGHTED_64(5)
WEIGHTED_64(6)

/* Weighted values for lanes [lane, lane + count) of one value head; acc holds their D sums each. */
static void weighted(const uint16_t *v, long vsl, const uint8_t *mask, long from, long to, const float *scores,
                     int lane, int count, int D, float *acc) {
    if (D == 64) {
        static void (*const by_lanes[])(const uint16_t *, long, const uint8_t *, long, long, const float *, int,
                                         float *) = {weighted_64_1, weighted_64_2, weighted_64_3,
                                                     weighted_64_4, weighted_64_5, weighted_64_6};
        for (int at = 0; at < count; at += 6) {
            const int m = count - at < 6 ? count - at : 6;
            by_lanes[m - 1](v, vsl, mask, from, to, scores, lane + at, acc + (long)at * 64);
        }
        return;
    }
    float column[MAX_HEAD_DIM];
    for (long l = from; l < to; l++) {
        if (!kept(mask, l)) continue;
        const uint16_t *row = v + l * vsl;
        prefetch_column(row + PREFETCH_COLUMNS * vsl, (long)sizeof(uint16_t) * D);
        for (int d = 0; d < D; d++) column[d] = bf16_to_f32(row[d]);
        for (int j = 0; j < count; j++) {
            const float p = scores[l * LANES + lane + j];
            for (int d = 0; d < D; d++) acc[(long)j * D + d] += p * column[d];
        }
    }
}

/* One group of n rows (n * G <= 16 lanes: row i's G query heads are lanes iG..iG+G-1) and one
 * key/value head, the arguments of GROUP_HEAD; rows that share nothing (shared 0) are a group too,
 * so that the softmax's vector work is spent on up to 16 queries a column, not G. scratch holds
 * (L + 16) x 16 floats of scores, a 16 x 16 block, then two 16 x D bfloat16 blocks (the packed
 * queries, a short block's keys), then 16 x D floats of sums. */
static void amx_group(const uint16_t *q, long qsr, const uint16_t *k, long ksb, long ksl, const uint16_t *v, long vsb,
                      long vsl, const uint8_t *mask, long msb, int lead, const int *rows, int n, long shared, long L,
                      int G, int D, float scale, uint16_t *out, float *scratch, const int *kv) {
    const int NQ = n * G;
    const long first = group_first_column(mask, msb, rows, n, L);
    const long split = shared < first ? first : (shared > L ? L : shared);
    const uint8_t *lead_mask = mask ? mask + lead * msb : NULL;
    float *scores = scratch, *block = scratch + (L + 16) * LANES; /* column l's 16 lanes at scores[l * 16] */
    uint16_t *packed = (uint16_t *)(block + 16 * LANES), *tail = packed + (long)D * LANES;
    float *acc = (float *)(tail + (long)D * LANES);
    const __mmask16 all = (__mmask16)((1u << NQ) - 1u);
    pack_queries(q, qsr, rows, G, D, NQ, packed);
    /* scores: the shared columns from the lead row for every lane, then each row's own for its lanes
     * (a row's own block is a product of its own: another row's keys there, which a masked column may
     * hold anything in, never reach its lanes); a row's blocks before its first kept column are not
     * computed, their lanes masked. */
    __m512 top = _mm512_set1_ps(MASKED);
    for (long l = first; l < split; l += 16) {
        const int count = split - l < 16 ? (int)(split - l) : 16;
        _tile_zero(0);
        add_block(k + KV_ROW(kv, lead) * ksb + l * ksl, ksl, count, D, packed, tail);
        _tile_stored(0, block, LANES * sizeof(float));
        keep_scores(block, l, count, lead_mask, all, scale, scores, &top);
    }
    for (int i = 0; i < n; i++) {
        const uint8_t *own_mask = mask ? mask + rows[i] * msb : NULL;
        const long own_first = first_column(own_mask, L), own_end = end_column(own_mask, L);
        const __mmask16 lanes = (__mmask16)(((1u << G) - 1u) << (i * G));
        for (long l = split; l < L; l += 16) {
            const int count = L - l < 16 ? (int)(L - l) : 16;
            if (l + count <= own_first || l >= own_end) {
                for (int c = 0; c < count; c++)
                    _mm512_mask_store_ps(scores + (l + c) * LANES, lanes, _mm512_set1_ps(MASKED));
                continue;
            }
            _tile_zero(0);
            add_block(k + KV_ROW(kv, rows[i]) * ksb + l * ksl, ksl, count, D, packed, tail);
            _tile_stored(0, block, LANES * sizeof(float));
            keep_scores(block, l, count, own_mask, lanes, scale, scores, &top);
        }
    }
    /* each lane's softmax over the columns in order; a lane with no column kept gets zeros */
    const __mmask16 live = _mm512_cmp_ps_mask(top, _mm512_set1_ps(MASKED), _CMP_GT_OQ);
    __m512 sum = _mm512_setzero_ps();
    for (long l = first; l < L; l++) {
        const __m512 p = _mm512_maskz_mov_ps(live, exp16(_mm512_sub_ps(_mm512_load_ps(scores + l * LANES), top)));
        _mm512_store_ps(scores + l * LANES, p);
        sum = _mm512_add_ps(sum, p);
    }
    float sums[LANES] __attribute__((aligned(64)));
    _mm512_store_ps(sums, sum);
    /* weighted values: the shared columns once from the lead row, then each row's own */
    memset(acc, 0, sizeof(float) * (size_t)NQ * D);
    weighted(v + KV_ROW(kv, lead) * vsb, vsl, lead_mask, first, split, scores, 0, NQ, D, acc);
    for (int i = 0; i < n; i++)
        weighted(v + KV_ROW(kv, rows[i]) * vsb, vsl, mask ? mask + rows[i] * msb : NULL, split, L, scores, i * G, G, D,
                 acc + (long)i * G * D);
    for (int i = 0; i < n; i++)
        for (int g = 0; g < G; g++) {
            const int j = i * G + g;
            const float norm = sums[j] > 0.f ? 1.f / sums[j] : 0.f;
            for (int d = 0; d < D; d++) out[rows[i] * qsr + (long)g * D + d] = f32_to_bf16(acc[(long)j * D + d] * norm);
        }
}

static int amx_serves(int G, int D) { return G <= LANES && D % 32 == 0 && D <= MAX_HEAD_DIM && amx_on(); }

/* Both entry points' work on tiles: items are (group, head) pairs, a group taken 16 / G rows at a time. */
static int amx_decode(const uint16_t *q, const uint16_t *k, const uint16_t *v, long ksb, long ksh, long ksl, long vsb,
                      long vsh, long vsl, const uint8_t *mask, long msb, int KV, int G, int D, long L, float scale,
                      uint16_t *out, int threads, const int *rows, const int *starts, int groups, const long *shared,
                      const int *kv) {
    const int chunk = LANES / G;
    const long qsr = (long)KV * G * D;
    const size_t floats = (size_t)(L + 32) * LANES + (size_t)D * LANES * 2;
    int failed = 0;
#pragma omp parallel num_threads(threads) reduction(| : failed)
    {
        float *scratch = aligned_alloc(64, ((sizeof(float) * floats + 63) / 64) * 64);
        failed = scratch == NULL;
        if (scratch != NULL) tiles_start();
#pragma omp for schedule(dynamic)
        for (int i = 0; i < groups * KV; i++) {
            if (scratch == NULL) continue;
            const int g = i / KV, h = i % KV;
            for (int at = starts[g]; at < starts[g + 1]; at += chunk) {
                const int n = starts[g + 1] - at < chunk ? starts[g + 1] - at : chunk;
                amx_group(q + (long)h * G * D, qsr, k + h * ksh, ksb, ksl, v + h * vsh, vsb, vsl, mask, msb,
                          rows[starts[g]], rows + at, n, shared[g], L, G, D, scale, out + (long)h * G * D, scratch, kv);
            }
        }
        if (scratch != NULL) _tile_release();
        free(scratch);
    }
    return failed ? -1 : 0;
}

/* The plain kernel's rows as groups that share nothing: 16 / G neighbours a group. */
static int amx_plain(const uint16_t *q, const uint16_t *k, const uint16_t *v, long ksb, long ksh, long ksl, long vsb,
                     long vsh, long vsl, const uint8_t *mask, long msb, int B, int KV, int G, int D, long L, float scale,
                     uint16_t *out, int threads) {
    const int chunk = LANES / G, groups = (B + chunk - 1) / chunk;
    int *rows = malloc(sizeof(int) * ((size_t)B + (size_t)groups + 1));
    long *shared = calloc((size_t)groups + 1, sizeof(long));
    int status = -1;
    if (rows != NULL && shared != NULL) {
        int *starts = rows + B;
        for (int b = 0; b < B; b++) rows[b] = b;
        for (int g = 0; g <= groups; g++) starts[g] = g * chunk < B ? g * chunk : B;
        status = amx_decode(q, k, v, ksb, ksh, ksl, vsb, vsh, vsl, mask, msb, KV, G, D, L, scale, out, threads, rows,
                            starts, groups, shared, NULL);
    }
    free(rows);
    free(shared);
    return status;
}
#endif

/* 1 when bfloat16 calls run on tiles; want 0 turns them off for the process, 1 back on, -1 asks. */
int decode_attention_amx(int want) {
#if defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__AVX512F__)
    if (want >= 0) amx_wanted = want;
    return amx_on();
#else
    (void)want;
    return 0;
#endif
}

int decode_attention_bf16(const uint16_t *q, const uint16_t *k, const uint16_t *v, long ksb, long ksh, long ksl,
                          long vsb, long vsh, long vsl, const uint8_t *mask, long msb, int B, int KV, int G, int D,
                          long L, float scale, uint16_t *out, int threads) {
#if defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__AVX512F__)
    if (amx_serves(G, D)) return amx_plain(q, k, v, ksb, ksh, ksl, vsb, vsh, vsl, mask, msb, B, KV, G, D, L, scale, out, threads);
#endif
    return portable_bf16(q, k, v, ksb, ksh, ksl, vsb, vsh, vsl, mask, msb, B, KV, G, D, L, scale, out, threads);
}

int decode_attention_shared_bf16(const uint16_t *q, const uint16_t *k, const uint16_t *v, long ksb, long ksh, long ksl,
                                 long vsb, long vsh, long vsl, const uint8_t *mask, long msb, int B, int KV, int G,
                                 int D, long L, float scale, uint16_t *out, int threads, const int *rows,
                                 const int *starts, int groups, const long *shared, const int *kv) {
#if defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__AVX512F__)
    if (amx_serves(G, D)) {
        if (starts[groups] != B) return -2;
        return amx_decode(q, k, v, ksb, ksh, ksl, vsb, vsh, vsl, mask, msb, KV, G, D, L, scale, out, threads, rows,
                          starts, groups, shared, kv);
    }
#endif
    return portable_shared_bf16(q, k, v, ksb, ksh, ksl, vsb, vsh, vsl, mask, msb, B, KV, G, D, L, scale, out, threads,
                                rows, starts, groups, shared, kv);
}
