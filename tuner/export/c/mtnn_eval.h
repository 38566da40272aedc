/* ---- movetuner's reference forward pass of the network (docs/network.md) -----------------
 *
 * This part is the same for every network: `tuner export NET.mtnn --format c` writes the
 * network's parameters and sizes above it (MTNN_H, MTNN_H2, MTNN_H3, MTNN_N_INPUTS, MTNN_QA,
 * MTNN_QB, MTNN_QO, MTNN_PHASE_MAX, MTNN_BUCKETS, MTNN_W1 .. MTNN_B4). It is plain C99, every
 * function `static inline`, and computes exactly what movetuner's search computes
 * (search/network_kernels.py): int16 accumulators, int32 hidden sums, an int64 output and a
 * floor division at the end.
 *
 * Conventions: colour 0 = White, 1 = Black; piece type 0 pawn, 1 knight, 2 bishop, 3 rook,
 * 4 queen, 5 king; squares a1 = 0, b1 = 1, ..., h8 = 63. Scores are in eval units (1/24 of a
 * centipawn: divide by MTNN_PHASE_MAX for centipawns) from the side to move's point of view.
 *
 * Use in an engine: keep one mtnn_accumulators per ply. At the root call mtnn_refresh for both
 * perspectives; on a move, copy the parent's pair and, per perspective, mtnn_sub the inputs the
 * move removes (the moving piece on its origin, a captured piece, a castling rook on its
 * origin) and mtnn_add those it adds (the piece or its promotion on the target, the rook on its
 * castling square), with the bucket of that perspective's king after the move; when a king
 * move changes its own perspective's bucket, refresh that perspective instead. Evaluate with
 * mtnn_forward, which also takes the number of pieces on the board (kings included): it picks
 * the output layer's row (MTNN_N_OUTPUTS output buckets, mtnn_output_bucket). mtnn_evaluate
 * does all of it from scratch for one position.
 */

#define MTNN_EMPTY (-1)

/* A position as the network sees it: what stands on each square, and who is to move. */
typedef struct mtnn_position {
    int8_t piece[64];   /* MTNN_EMPTY, or colour * 6 + type (0..5 White P N B R Q K, 6..11 Black) */
    int stm;            /* side to move: 0 White, 1 Black */
} mtnn_position;

/* The accumulators of one position: v[c] is perspective c's (0 White, 1 Black). */
typedef struct mtnn_accumulators {
    int16_t v[2][MTNN_H];
} mtnn_accumulators;

/* The input (row of MTNN_W1) of a piece of `colour` and `type` on `sq`, seen from perspective
 * `persp` whose king is in `bucket`: Black sees the board flipped vertically, and colours are
 * own (0) or their (1). */
static inline int mtnn_input(int persp, int colour, int type, int sq, int bucket)
{
    int rel = colour == persp ? 0 : 1;
    int s = persp == 0 ? sq : sq ^ 56;
    return ((bucket * 2 + rel) * 6 + type) * 64 + s;
}

/* The king bucket of perspective `persp` whose king stands on `king_sq`. */
static inline int mtnn_bucket(int persp, int king_sq)
{
    return MTNN_BUCKETS[persp == 0 ? king_sq : king_sq ^ 56];
}

/* acc += the MTNN_W1 row of `input` (a piece appears). The parameters' bounds keep every
 * accumulator of a legal position within int16 (docs/network.md, "Bounds"). */
static inline void mtnn_add(int16_t acc[MTNN_H], int input)
{
    int j;
    for (j = 0; j < MTNN_H; j++)
        acc[j] = (int16_t)(acc[j] + MTNN_W1[input][j]);
}

/* acc -= the MTNN_W1 row of `input` (a piece disappears). */
static inline void mtnn_sub(int16_t acc[MTNN_H], int input)
{
    int j;
    for (j = 0; j < MTNN_H; j++)
        acc[j] = (int16_t)(acc[j] - MTNN_W1[input][j]);
}

/* The square of `colour`'s king in `pos` (0 if it has none; positions are expected to have
 * one king of each colour). */
static inline int mtnn_king_square(const mtnn_position *pos, int colour)
{
    int sq;
    for (sq = 0; sq < 64; sq++)
        if (pos->piece[sq] == colour * 6 + 5)
            return sq;
    return 0;
}

/* Perspective `persp`'s accumulator of `pos` from scratch: MTNN_B1 plus the MTNN_W1 row of
 * every piece's input. */
static inline void mtnn_refresh(mtnn_accumulators *acc, const mtnn_position *pos, int persp)
{
    int bucket = mtnn_bucket(persp, mtnn_king_square(pos, persp));
    int j, sq;
    for (j = 0; j < MTNN_H; j++)
        acc->v[persp][j] = MTNN_B1[j];
    for (sq = 0; sq < 64; sq++)
        if (pos->piece[sq] != MTNN_EMPTY)
            mtnn_add(acc->v[persp], mtnn_input(persp, pos->piece[sq] / 6, pos->piece[sq] % 6, sq, bucket));
}

/* The output bucket of a position with `pieces` pieces on the board, kings included:
 * (pieces - 2) * MTNN_N_OUTPUTS / 32, within [0, MTNN_N_OUTPUTS - 1]. */
static inline int mtnn_output_bucket(int pieces)
{
    int o = (pieces - 2) * MTNN_N_OUTPUTS / 32;
    return o < 0 ? 0 : (o >= MTNN_N_OUTPUTS ? MTNN_N_OUTPUTS - 1 : o);
}

/* floor(n / d) for d > 0 (C's `/` truncates towards zero). */
static inline int64_t mtnn_floor_div(int64_t n, int64_t d)
{
    int64_t q = n / d;
    return (n % d != 0 && n < 0) ? q - 1 : q;
}

/* The network's score (eval units, side to move's view) from the accumulators `acc` of a
 * position with side to move `stm` and `pieces` pieces on the board (o its output bucket):
 *   x   = clamp(acc[stm], 0, QA) ++ clamp(acc[1 - stm], 0, QA)
 *   h2  = min(max(b2 + x W2, 0) / QB, QA)        h3 = min(max(b3 + h2 W3, 0) / QB, QA)
 *   out = b4[o] + h3 . W4[o]                     score = floor(out * PHASE_MAX / (QA * QO)) */
#if MTNN_DIRECT
/* The direct form (no hidden layers): the network's score (eval units, side to move's view)
 * from the accumulators `acc` of a position with side to move `stm` and `pieces` pieces:
 *   x   = clamp(acc[stm], 0, QA) ++ clamp(acc[1 - stm], 0, QA)
 *   out = b4[o] QA + sum_j x_j^2 W4[o][j]        score = floor(out * PHASE_MAX / (QA^2 * QO)) */
static inline int64_t mtnn_forward(const mtnn_accumulators *acc, int stm, int pieces)
{
    int o = mtnn_output_bucket(pieces);
    int64_t out = MTNN_B4[o] * MTNN_QA;
    int half, j;
    for (half = 0; half < 2; half++) {
        const int16_t *a = acc->v[half == 0 ? stm : 1 - stm];
        for (j = 0; j < MTNN_H; j++) {
            int64_t x = a[j] > MTNN_QA ? MTNN_QA : a[j];
            if (x <= 0)
                continue;
            out += x * x * MTNN_W4[o][half * MTNN_H + j];
        }
    }
    return mtnn_floor_div(out * MTNN_PHASE_MAX, (int64_t)MTNN_QA * MTNN_QA * MTNN_QO);
}
#else
static inline int64_t mtnn_forward(const mtnn_accumulators *acc, int stm, int pieces)
{
    int32_t z2[MTNN_H2], z3[MTNN_H3];
    int o = mtnn_output_bucket(pieces);
    int64_t out = MTNN_B4[o];
    int half, j, k;
    for (k = 0; k < MTNN_H2; k++)
        z2[k] = MTNN_B2[k];
    for (half = 0; half < 2; half++) {
        const int16_t *a = acc->v[half == 0 ? stm : 1 - stm];
        for (j = 0; j < MTNN_H; j++) {
            int32_t x = a[j] > MTNN_QA ? MTNN_QA : a[j];
            if (x <= 0)
                continue;
            for (k = 0; k < MTNN_H2; k++)
                z2[k] += x * MTNN_W2[half * MTNN_H + j][k];
        }
    }
    for (k = 0; k < MTNN_H3; k++)
        z3[k] = MTNN_B3[k];
    for (j = 0; j < MTNN_H2; j++) {
        int32_t h2 = z2[j] / MTNN_QB;
        if (z2[j] <= 0)
            continue;
        if (h2 > MTNN_QA)
            h2 = MTNN_QA;
        for (k = 0; k < MTNN_H3; k++)
            z3[k] += h2 * MTNN_W3[j][k];
    }
    for (j = 0; j < MTNN_H3; j++) {
        int32_t h3 = z3[j] / MTNN_QB;
        if (z3[j] <= 0)
            continue;
        if (h3 > MTNN_QA)
            h3 = MTNN_QA;
        out += (int64_t)h3 * MTNN_W4[o][j];
    }
    return mtnn_floor_div(out * MTNN_PHASE_MAX, (int64_t)MTNN_QA * MTNN_QO);
}
#endif

/* The network's score of `pos` from fresh accumulators (eval units, side to move's view). */
static inline int64_t mtnn_evaluate(const mtnn_position *pos)
{
    mtnn_accumulators acc;
    int sq, pieces = 0;
    for (sq = 0; sq < 64; sq++)
        pieces += pos->piece[sq] != MTNN_EMPTY;
    mtnn_refresh(&acc, pos, 0);
    mtnn_refresh(&acc, pos, 1);
    return mtnn_forward(&acc, pos->stm, pieces);
}

/* Read the piece placement and side to move of a FEN into `pos` (the other fields do not
 * matter to the network and are not read). Returns 0, or -1 for a malformed placement, a
 * missing side to move, or a colour without exactly one king. */
static inline int mtnn_parse_fen(const char *fen, mtnn_position *pos)
{
    static const char names[] = "PNBRQKpnbrqk";
    int rank = 7, file = 0, kings[2] = {0, 0}, sq, p;
    for (sq = 0; sq < 64; sq++)
        pos->piece[sq] = MTNN_EMPTY;
    while (*fen == ' ')
        fen++;
    for (; *fen != '\0' && *fen != ' '; fen++) {
        char c = *fen;
        if (c == '/') {
            if (file != 8 || rank == 0)
                return -1;
            rank--;
            file = 0;
        } else if (c >= '1' && c <= '8') {
            file += c - '0';
            if (file > 8)
                return -1;
        } else {
            for (p = 0; p < 12 && names[p] != c; p++)
                ;
            if (p == 12 || file > 7)
                return -1;
            pos->piece[rank * 8 + file] = (int8_t)p;
            if (p % 6 == 5)
                kings[p / 6]++;
            file++;
        }
    }
    if (rank != 0 || file != 8 || kings[0] != 1 || kings[1] != 1)
        return -1;
    while (*fen == ' ')
        fen++;
    if ((fen[0] != 'w' && fen[0] != 'b') || (fen[1] != '\0' && fen[1] != ' '))
        return -1;
    pos->stm = fen[0] == 'w' ? 0 : 1;
    return 0;
}
