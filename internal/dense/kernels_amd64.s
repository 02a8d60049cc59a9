#include "textflag.h"

// func gemm4x8AVX2(kc int, pa *float64, lda int, pb *float64, ldb int, acc *[32]float64)
//
// Y0–Y7 hold the 4×8 sums (row q in Y(2q), Y(2q+1)); per i, the eight
// numbers at pb are loaded once and each of the four at pa is broadcast;
// pa then moves on by lda bytes and pb by ldb. Multiplications and
// additions are separate instructions (no FMA), so every sum is the same as
// the pure-Go loop's.
TEXT ·gemm4x8AVX2(SB), NOSPLIT, $0-48
	MOVQ kc+0(FP), CX
	MOVQ pa+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ pb+24(FP), DI
	MOVQ ldb+32(FP), R9
	MOVQ acc+40(FP), DX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	TESTQ CX, CX
	JLE   gemm_store

gemm_loop:
	VMOVUPD      (DI), Y8
	VMOVUPD      32(DI), Y9
	VBROADCASTSD (SI), Y10
	VBROADCASTSD 8(SI), Y11
	VMULPD       Y8, Y10, Y12
	VMULPD       Y9, Y10, Y13
	VADDPD       Y12, Y0, Y0
	VADDPD       Y13, Y1, Y1
	VMULPD       Y8, Y11, Y14
	VMULPD       Y9, Y11, Y15
	VADDPD       Y14, Y2, Y2
	VADDPD       Y15, Y3, Y3
	VBROADCASTSD 16(SI), Y10
	VBROADCASTSD 24(SI), Y11
	VMULPD       Y8, Y10, Y12
	VMULPD       Y9, Y10, Y13
	VADDPD       Y12, Y4, Y4
	VADDPD       Y13, Y5, Y5
	VMULPD       Y8, Y11, Y14
	VMULPD       Y9, Y11, Y15
	VADDPD       Y14, Y6, Y6
	VADDPD       Y15, Y7, Y7
	ADDQ         R8, SI
	ADDQ         R9, DI
	DECQ         CX
	JNZ          gemm_loop

gemm_store:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VMOVUPD Y4, 128(DX)
	VMOVUPD Y5, 160(DX)
	VMOVUPD Y6, 192(DX)
	VMOVUPD Y7, 224(DX)
	VZEROUPPER
	RET

// func dot2x4AVX2(n4 int, a0, a1, b0, b1, b2, b3 *float64, acc *[32]float64)
//
// Eight dot products, each with its four partial sums in the four lanes of
// one register (lane q: the products of index ≡ q mod 4), as gonum's SSE2
// DotUnitary keeps them in two registers of two lanes.
TEXT ·dot2x4AVX2(SB), NOSPLIT, $0-64
	MOVQ n4+0(FP), CX
	MOVQ a0+8(FP), SI
	MOVQ a1+16(FP), DI
	MOVQ b0+24(FP), R8
	MOVQ b1+32(FP), R9
	MOVQ b2+40(FP), R10
	MOVQ b3+48(FP), R11
	MOVQ acc+56(FP), DX
	VMOVUPD (DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 64(DX), Y2
	VMOVUPD 96(DX), Y3
	VMOVUPD 128(DX), Y4
	VMOVUPD 160(DX), Y5
	VMOVUPD 192(DX), Y6
	VMOVUPD 224(DX), Y7
	TESTQ CX, CX
	JLE   dot24_store

dot24_loop:
	VMOVUPD (SI), Y8
	VMOVUPD (DI), Y9
	VMOVUPD (R8), Y10
	VMOVUPD (R9), Y11
	VMULPD  Y10, Y8, Y12
	VMULPD  Y10, Y9, Y13
	VADDPD  Y12, Y0, Y0
	VADDPD  Y13, Y4, Y4
	VMULPD  Y11, Y8, Y14
	VMULPD  Y11, Y9, Y15
	VADDPD  Y14, Y1, Y1
	VADDPD  Y15, Y5, Y5
	VMOVUPD (R10), Y10
	VMOVUPD (R11), Y11
	VMULPD  Y10, Y8, Y12
	VMULPD  Y10, Y9, Y13
	VADDPD  Y12, Y2, Y2
	VADDPD  Y13, Y6, Y6
	VMULPD  Y11, Y8, Y14
	VMULPD  Y11, Y9, Y15
	VADDPD  Y14, Y3, Y3
	VADDPD  Y15, Y7, Y7
	ADDQ    $32, SI
	ADDQ    $32, DI
	ADDQ    $32, R8
	ADDQ    $32, R9
	ADDQ    $32, R10
	ADDQ    $32, R11
	DECQ    CX
	JNZ     dot24_loop

dot24_store:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VMOVUPD Y4, 128(DX)
	VMOVUPD Y5, 160(DX)
	VMOVUPD Y6, 192(DX)
	VMOVUPD Y7, 224(DX)
	VZEROUPPER
	RET

// func dot1x4AVX2(n4 int, a0, b0, b1, b2, b3 *float64, acc *[16]float64)
TEXT ·dot1x4AVX2(SB), NOSPLIT, $0-56
	MOVQ n4+0(FP), CX
	MOVQ a0+8(FP), SI
	MOVQ b0+16(FP), R8
	MOVQ b1+24(FP), R9
	MOVQ b2+32(FP), R10
	MOVQ b3+40(FP), R11
	MOVQ acc+48(FP), DX
	VMOVUPD (DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 64(DX), Y2
	VMOVUPD 96(DX), Y3
	TESTQ CX, CX
	JLE   dot14_store

dot14_loop:
	VMOVUPD (SI), Y8
	VMULPD  (R8), Y8, Y12
	VMULPD  (R9), Y8, Y13
	VMULPD  (R10), Y8, Y14
	VMULPD  (R11), Y8, Y15
	VADDPD  Y12, Y0, Y0
	VADDPD  Y13, Y1, Y1
	VADDPD  Y14, Y2, Y2
	VADDPD  Y15, Y3, Y3
	ADDQ    $32, SI
	ADDQ    $32, R8
	ADDQ    $32, R9
	ADDQ    $32, R10
	ADDQ    $32, R11
	DECQ    CX
	JNZ     dot14_loop

dot14_store:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VZEROUPPER
	RET

// func colAdd16AVX2(rows int, a *float64, stride int, x *float64, xstep int, acc *[16]float64)
//
// Sixteen running sums in Y0–Y3; each row multiplies its sixteen numbers by
// the broadcast x[t] and adds the products.
TEXT ·colAdd16AVX2(SB), NOSPLIT, $0-48
	MOVQ rows+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ x+24(FP), DI
	MOVQ xstep+32(FP), R9
	MOVQ acc+40(FP), DX
	VMOVUPD (DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 64(DX), Y2
	VMOVUPD 96(DX), Y3
	TESTQ CX, CX
	JLE   coladd_store

coladd_loop:
	VBROADCASTSD (DI), Y4
	VMULPD       (SI), Y4, Y5
	VMULPD       32(SI), Y4, Y6
	VMULPD       64(SI), Y4, Y7
	VMULPD       96(SI), Y4, Y8
	VADDPD       Y5, Y0, Y0
	VADDPD       Y6, Y1, Y1
	VADDPD       Y7, Y2, Y2
	VADDPD       Y8, Y3, Y3
	ADDQ         R8, SI
	ADDQ         R9, DI
	DECQ         CX
	JNZ          coladd_loop

coladd_store:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VZEROUPPER
	RET

// func colSub16AVX2(rows int, a *float64, stride int, x *float64, xstep int, acc *[16]float64)
TEXT ·colSub16AVX2(SB), NOSPLIT, $0-48
	MOVQ rows+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ x+24(FP), DI
	MOVQ xstep+32(FP), R9
	MOVQ acc+40(FP), DX
	VMOVUPD (DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 64(DX), Y2
	VMOVUPD 96(DX), Y3
	TESTQ CX, CX
	JLE   colsub_store

colsub_loop:
	VBROADCASTSD (DI), Y4
	VMULPD       (SI), Y4, Y5
	VMULPD       32(SI), Y4, Y6
	VMULPD       64(SI), Y4, Y7
	VMULPD       96(SI), Y4, Y8
	VSUBPD       Y5, Y0, Y0
	VSUBPD       Y6, Y1, Y1
	VSUBPD       Y7, Y2, Y2
	VSUBPD       Y8, Y3, Y3
	ADDQ         R8, SI
	ADDQ         R9, DI
	DECQ         CX
	JNZ          colsub_loop

colsub_store:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VZEROUPPER
	RET

// func rotAVX2(n4 int, x, y *float64, c, s float64)
TEXT ·rotAVX2(SB), NOSPLIT, $0-40
	MOVQ         n4+0(FP), CX
	MOVQ         x+8(FP), SI
	MOVQ         y+16(FP), DI
	VBROADCASTSD c+24(FP), Y0
	VBROADCASTSD s+32(FP), Y1
	TESTQ        CX, CX
	JLE          rot_done

rot_loop:
	VMOVUPD (DI), Y2 // t
	VMOVUPD (SI), Y3 // t2
	VMULPD  Y2, Y0, Y4 // c·t
	VMULPD  Y3, Y1, Y5 // s·t2
	VMULPD  Y2, Y1, Y6 // s·t
	VMULPD  Y3, Y0, Y7 // c·t2
	VSUBPD  Y5, Y4, Y4 // c·t − s·t2
	VADDPD  Y7, Y6, Y6 // s·t + c·t2
	VMOVUPD Y4, (DI)
	VMOVUPD Y6, (SI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     rot_loop

rot_done:
	VZEROUPPER
	RET

// func colAdd4AVX2(rows int, a *float64, stride int, x *float64, xstep int, acc *[4]float64)
TEXT ·colAdd4AVX2(SB), NOSPLIT, $0-48
	MOVQ rows+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ x+24(FP), DI
	MOVQ xstep+32(FP), R9
	MOVQ acc+40(FP), DX
	VMOVUPD (DX), Y0
	TESTQ CX, CX
	JLE   coladd4_store

coladd4_loop:
	VBROADCASTSD (DI), Y4
	VMULPD       (SI), Y4, Y5
	VADDPD       Y5, Y0, Y0
	ADDQ         R8, SI
	ADDQ         R9, DI
	DECQ         CX
	JNZ          coladd4_loop

coladd4_store:
	VMOVUPD Y0, (DX)
	VZEROUPPER
	RET

// func colSub4AVX2(rows int, a *float64, stride int, x *float64, xstep int, acc *[4]float64)
TEXT ·colSub4AVX2(SB), NOSPLIT, $0-48
	MOVQ rows+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ x+24(FP), DI
	MOVQ xstep+32(FP), R9
	MOVQ acc+40(FP), DX
	VMOVUPD (DX), Y0
	TESTQ CX, CX
	JLE   colsub4_store

colsub4_loop:
	VBROADCASTSD (DI), Y4
	VMULPD       (SI), Y4, Y5
	VSUBPD       Y5, Y0, Y0
	ADDQ         R8, SI
	ADDQ         R9, DI
	DECQ         CX
	JNZ          colsub4_loop

colsub4_store:
	VMOVUPD Y0, (DX)
	VZEROUPPER
	RET

// func colAdd8AVX2(rows int, a *float64, stride int, x *float64, xstep int, acc *[8]float64)
TEXT ·colAdd8AVX2(SB), NOSPLIT, $0-48
	MOVQ rows+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ x+24(FP), DI
	MOVQ xstep+32(FP), R9
	MOVQ acc+40(FP), DX
	VMOVUPD (DX), Y0
	VMOVUPD 32(DX), Y1
	TESTQ CX, CX
	JLE   coladd8_store

coladd8_loop:
	VBROADCASTSD (DI), Y4
	VMULPD       (SI), Y4, Y5
	VMULPD       32(SI), Y4, Y6
	VADDPD       Y5, Y0, Y0
	VADDPD       Y6, Y1, Y1
	ADDQ         R8, SI
	ADDQ         R9, DI
	DECQ         CX
	JNZ          coladd8_loop

coladd8_store:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VZEROUPPER
	RET

// func colSub8AVX2(rows int, a *float64, stride int, x *float64, xstep int, acc *[8]float64)
TEXT ·colSub8AVX2(SB), NOSPLIT, $0-48
	MOVQ rows+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ x+24(FP), DI
	MOVQ xstep+32(FP), R9
	MOVQ acc+40(FP), DX
	VMOVUPD (DX), Y0
	VMOVUPD 32(DX), Y1
	TESTQ CX, CX
	JLE   colsub8_store

colsub8_loop:
	VBROADCASTSD (DI), Y4
	VMULPD       (SI), Y4, Y5
	VMULPD       32(SI), Y4, Y6
	VSUBPD       Y5, Y0, Y0
	VSUBPD       Y6, Y1, Y1
	ADDQ         R8, SI
	ADDQ         R9, DI
	DECQ         CX
	JNZ          colsub8_loop

colsub8_store:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VZEROUPPER
	RET

// func colAdd12AVX2(rows int, a *float64, stride int, x *float64, xstep int, acc *[12]float64)
TEXT ·colAdd12AVX2(SB), NOSPLIT, $0-48
	MOVQ rows+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ x+24(FP), DI
	MOVQ xstep+32(FP), R9
	MOVQ acc+40(FP), DX
	VMOVUPD (DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 64(DX), Y2
	TESTQ CX, CX
	JLE   coladd12_store

coladd12_loop:
	VBROADCASTSD (DI), Y4
	VMULPD       (SI), Y4, Y5
	VMULPD       32(SI), Y4, Y6
	VMULPD       64(SI), Y4, Y7
	VADDPD       Y5, Y0, Y0
	VADDPD       Y6, Y1, Y1
	VADDPD       Y7, Y2, Y2
	ADDQ         R8, SI
	ADDQ         R9, DI
	DECQ         CX
	JNZ          coladd12_loop

coladd12_store:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VZEROUPPER
	RET

// func colSub12AVX2(rows int, a *float64, stride int, x *float64, xstep int, acc *[12]float64)
TEXT ·colSub12AVX2(SB), NOSPLIT, $0-48
	MOVQ rows+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ stride+16(FP), R8
	MOVQ x+24(FP), DI
	MOVQ xstep+32(FP), R9
	MOVQ acc+40(FP), DX
	VMOVUPD (DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 64(DX), Y2
	TESTQ CX, CX
	JLE   colsub12_store

colsub12_loop:
	VBROADCASTSD (DI), Y4
	VMULPD       (SI), Y4, Y5
	VMULPD       32(SI), Y4, Y6
	VMULPD       64(SI), Y4, Y7
	VSUBPD       Y5, Y0, Y0
	VSUBPD       Y6, Y1, Y1
	VSUBPD       Y7, Y2, Y2
	ADDQ         R8, SI
	ADDQ         R9, DI
	DECQ         CX
	JNZ          colsub12_loop

colsub12_store:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VZEROUPPER
	RET

// func gemm4x8AccAVX2(kc int, pa *float64, lda int, pb *float64, ldb int, acc *[32]float64)
//
// gemm4x8AccAVX2 is gemm4x8AVX2 adding to the 32 numbers already in acc.
// Y0–Y7 hold the 4×8 sums (row q in Y(2q), Y(2q+1)); per i, the eight
// numbers at pb are loaded once and each of the four at pa is broadcast;
// pa then moves on by lda bytes and pb by ldb. Multiplications and
// additions are separate instructions (no FMA), so every sum is the same as
// the pure-Go loop's.
TEXT ·gemm4x8AccAVX2(SB), NOSPLIT, $0-48
	MOVQ kc+0(FP), CX
	MOVQ pa+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ pb+24(FP), DI
	MOVQ ldb+32(FP), R9
	MOVQ acc+40(FP), DX
	VMOVUPD (DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 64(DX), Y2
	VMOVUPD 96(DX), Y3
	VMOVUPD 128(DX), Y4
	VMOVUPD 160(DX), Y5
	VMOVUPD 192(DX), Y6
	VMOVUPD 224(DX), Y7
	TESTQ CX, CX
	JLE   gemmacc_store

gemmacc_loop:
	VMOVUPD      (DI), Y8
	VMOVUPD      32(DI), Y9
	VBROADCASTSD (SI), Y10
	VBROADCASTSD 8(SI), Y11
	VMULPD       Y8, Y10, Y12
	VMULPD       Y9, Y10, Y13
	VADDPD       Y12, Y0, Y0
	VADDPD       Y13, Y1, Y1
	VMULPD       Y8, Y11, Y14
	VMULPD       Y9, Y11, Y15
	VADDPD       Y14, Y2, Y2
	VADDPD       Y15, Y3, Y3
	VBROADCASTSD 16(SI), Y10
	VBROADCASTSD 24(SI), Y11
	VMULPD       Y8, Y10, Y12
	VMULPD       Y9, Y10, Y13
	VADDPD       Y12, Y4, Y4
	VADDPD       Y13, Y5, Y5
	VMULPD       Y8, Y11, Y14
	VMULPD       Y9, Y11, Y15
	VADDPD       Y14, Y6, Y6
	VADDPD       Y15, Y7, Y7
	ADDQ         R8, SI
	ADDQ         R9, DI
	DECQ         CX
	JNZ          gemmacc_loop

gemmacc_store:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VMOVUPD Y4, 128(DX)
	VMOVUPD Y5, 160(DX)
	VMOVUPD Y6, 192(DX)
	VMOVUPD Y7, 224(DX)
	VZEROUPPER
	RET


// func lanesDot8AVX2(k, n4 int, x *float64, wt *float64, ldw int, out *[8]float64)
//
// Partial sum q of the eight dot products in Y(2q), Y(2q+1).
TEXT ·lanesDot8AVX2(SB), NOSPLIT, $0-48
	MOVQ   k+0(FP), BX
	MOVQ   n4+8(FP), CX
	MOVQ   x+16(FP), SI
	MOVQ   wt+24(FP), DI
	MOVQ   ldw+32(FP), R8
	MOVQ   out+40(FP), DX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	MOVQ   CX, AX
	SHLQ   $2, AX
	SUBQ   AX, BX   // BX = the tail, k − 4·n4
	TESTQ  CX, CX
	JLE    ld8_tail

ld8_loop:
	VBROADCASTSD (SI), Y8
	VMULPD       (DI), Y8, Y10
	VMULPD       32(DI), Y8, Y11
	VADDPD       Y10, Y0, Y0
	VADDPD       Y11, Y1, Y1
	ADDQ         R8, DI
	VBROADCASTSD 8(SI), Y9
	VMULPD       (DI), Y9, Y12
	VMULPD       32(DI), Y9, Y13
	VADDPD       Y12, Y2, Y2
	VADDPD       Y13, Y3, Y3
	ADDQ         R8, DI
	VBROADCASTSD 16(SI), Y8
	VMULPD       (DI), Y8, Y10
	VMULPD       32(DI), Y8, Y11
	VADDPD       Y10, Y4, Y4
	VADDPD       Y11, Y5, Y5
	ADDQ         R8, DI
	VBROADCASTSD 24(SI), Y9
	VMULPD       (DI), Y9, Y12
	VMULPD       32(DI), Y9, Y13
	VADDPD       Y12, Y6, Y6
	VADDPD       Y13, Y7, Y7
	ADDQ         R8, DI
	ADDQ         $32, SI
	DECQ         CX
	JNZ          ld8_loop

ld8_tail:
	TESTQ BX, BX
	JLE   ld8_done

ld8_tail_loop:
	VBROADCASTSD (SI), Y8
	VMULPD       (DI), Y8, Y10
	VMULPD       32(DI), Y8, Y11
	VADDPD       Y10, Y0, Y0
	VADDPD       Y11, Y1, Y1
	ADDQ         R8, DI
	ADDQ         $8, SI
	DECQ         BX
	JNZ          ld8_tail_loop

ld8_done:
	VADDPD  Y4, Y0, Y0 // s0 + s2
	VADDPD  Y5, Y1, Y1
	VADDPD  Y6, Y2, Y2 // s1 + s3
	VADDPD  Y7, Y3, Y3
	VADDPD  Y2, Y0, Y0
	VADDPD  Y3, Y1, Y1
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VZEROUPPER
	RET

// func cosineAVX2(n4 int, dst, phase *float64, scale float64, coef *[20]float64)
//
// coef[0:16] are the Taylor coefficients c_0…c_15, coef[16:20] invTwoPi,
// roundMagic, twoPiHi, twoPiLo.
TEXT ·cosineAVX2(SB), NOSPLIT, $0-40
	MOVQ         n4+0(FP), CX
	MOVQ         dst+8(FP), DI
	MOVQ         phase+16(FP), SI
	VBROADCASTSD scale+24(FP), Y15
	MOVQ         coef+32(FP), DX
	VBROADCASTSD 128(DX), Y11 // invTwoPi
	VBROADCASTSD 136(DX), Y12 // roundMagic
	VBROADCASTSD 144(DX), Y13 // twoPiHi
	VBROADCASTSD 152(DX), Y14 // twoPiLo
	TESTQ        CX, CX
	JLE          cos_done

cos_loop:
	VMOVUPD      (DI), Y0
	VADDPD       (SI), Y0, Y0  // x = v + phase
	VMULPD       Y11, Y0, Y1   // x·invTwoPi
	VADDPD       Y12, Y1, Y1   // + roundMagic
	VSUBPD       Y12, Y1, Y1   // − roundMagic: k
	VMULPD       Y13, Y1, Y2   // k·twoPiHi
	VSUBPD       Y2, Y0, Y0    // x − k·twoPiHi
	VMULPD       Y14, Y1, Y2   // k·twoPiLo
	VSUBPD       Y2, Y0, Y0    // r
	VMULPD       Y0, Y0, Y3    // z = r·r
	VBROADCASTSD 120(DX), Y4   // p = c15
	VMULPD       Y3, Y4, Y4
	VBROADCASTSD 112(DX), Y5
	VADDPD       Y5, Y4, Y4
	VMULPD       Y3, Y4, Y4
	VBROADCASTSD 104(DX), Y5
	VADDPD       Y5, Y4, Y4
	VMULPD       Y3, Y4, Y4
	VBROADCASTSD 96(DX), Y5
	VADDPD       Y5, Y4, Y4
	VMULPD       Y3, Y4, Y4
	VBROADCASTSD 88(DX), Y5
	VADDPD       Y5, Y4, Y4
	VMULPD       Y3, Y4, Y4
	VBROADCASTSD 80(DX), Y5
	VADDPD       Y5, Y4, Y4
	VMULPD       Y3, Y4, Y4
	VBROADCASTSD 72(DX), Y5
	VADDPD       Y5, Y4, Y4
	VMULPD       Y3, Y4, Y4
	VBROADCASTSD 64(DX), Y5
	VADDPD       Y5, Y4, Y4
	VMULPD       Y3, Y4, Y4
	VBROADCASTSD 56(DX), Y5
	VADDPD       Y5, Y4, Y4
	VMULPD       Y3, Y4, Y4
	VBROADCASTSD 48(DX), Y5
	VADDPD       Y5, Y4, Y4
	VMULPD       Y3, Y4, Y4
	VBROADCASTSD 40(DX), Y5
	VADDPD       Y5, Y4, Y4
	VMULPD       Y3, Y4, Y4
	VBROADCASTSD 32(DX), Y5
	VADDPD       Y5, Y4, Y4
	VMULPD       Y3, Y4, Y4
	VBROADCASTSD 24(DX), Y5
	VADDPD       Y5, Y4, Y4
	VMULPD       Y3, Y4, Y4
	VBROADCASTSD 16(DX), Y5
	VADDPD       Y5, Y4, Y4
	VMULPD       Y3, Y4, Y4
	VBROADCASTSD 8(DX), Y5
	VADDPD       Y5, Y4, Y4
	VMULPD       Y3, Y4, Y4
	VBROADCASTSD 0(DX), Y5
	VADDPD       Y5, Y4, Y4
	VMULPD       Y4, Y15, Y4   // scale·p
	VMOVUPD      Y4, (DI)
	ADDQ         $32, DI
	ADDQ         $32, SI
	DECQ         CX
	JNZ          cos_loop

cos_done:
	VZEROUPPER
	RET

// func dotStagedAVX2(nc int, x, r0, r1, r2, r3 *float64, acc *[16]float64)
//
// R9, R10, R11 are moved back by one, two and three blocks, so that x block
// s is at offset 32·s from SI and from every row register.
TEXT ·dotStagedAVX2(SB), NOSPLIT, $0-56
	MOVQ   nc+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   r0+16(FP), R8
	MOVQ   r1+24(FP), R9
	MOVQ   r2+32(FP), R10
	MOVQ   r3+40(FP), R11
	MOVQ   acc+48(FP), DX
	SUBQ   $32, R9
	SUBQ   $64, R10
	SUBQ   $96, R11
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3

	// Block 0: row 0.
	VMOVUPD (SI), Y8
	VMULPD  (R8), Y8, Y12
	VADDPD  Y12, Y0, Y0

	// Block 1: rows 0 and 1.
	VMOVUPD 32(SI), Y8
	VMULPD  32(R8), Y8, Y12
	VMULPD  32(R9), Y8, Y13
	VADDPD  Y12, Y0, Y0
	VADDPD  Y13, Y1, Y1

	// Block 2: rows 0, 1 and 2.
	VMOVUPD 64(SI), Y8
	VMULPD  64(R8), Y8, Y12
	VMULPD  64(R9), Y8, Y13
	VMULPD  64(R10), Y8, Y14
	VADDPD  Y12, Y0, Y0
	VADDPD  Y13, Y1, Y1
	VADDPD  Y14, Y2, Y2

	ADDQ  $96, SI
	ADDQ  $96, R8
	ADDQ  $96, R9
	ADDQ  $96, R10
	ADDQ  $96, R11
	TESTQ CX, CX
	JLE   staged_store

staged_loop:
	VMOVUPD (SI), Y8
	VMULPD  (R8), Y8, Y12
	VMULPD  (R9), Y8, Y13
	VMULPD  (R10), Y8, Y14
	VMULPD  (R11), Y8, Y15
	VADDPD  Y12, Y0, Y0
	VADDPD  Y13, Y1, Y1
	VADDPD  Y14, Y2, Y2
	VADDPD  Y15, Y3, Y3
	ADDQ    $32, SI
	ADDQ    $32, R8
	ADDQ    $32, R9
	ADDQ    $32, R10
	ADDQ    $32, R11
	DECQ    CX
	JNZ     staged_loop

staged_store:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VZEROUPPER
	RET

// func gemvN8AVX2(n2 int, a *float64, lda int, x *float64, acc *[32]float64)
//
// Y0 holds rows 0 and 1 (even, odd | even, odd), Y1 rows 2 and 3, Y2 rows 4
// and 5, Y3 rows 6 and 7. Per pair of columns, x's pair is broadcast to both
// halves and each row pair is loaded as two 128-bit halves.
TEXT ·gemvN8AVX2(SB), NOSPLIT, $0-40
	MOVQ   n2+0(FP), CX
	MOVQ   a+8(FP), SI
	MOVQ   lda+16(FP), R8
	MOVQ   x+24(FP), DI
	MOVQ   acc+32(FP), DX
	LEAQ   (R8)(R8*2), R9 // 3·lda
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	TESTQ  CX, CX
	JLE    gemvn_store
	MOVQ   SI, R10
	LEAQ   (SI)(R8*4), R11 // rows 4…7

gemvn_loop:
	VBROADCASTF128 (DI), Y8
	VMOVUPD        (R10), X4
	VINSERTF128    $1, (R10)(R8*1), Y4, Y4
	VMOVUPD        (R10)(R8*2), X5
	VINSERTF128    $1, (R10)(R9*1), Y5, Y5
	VMOVUPD        (R11), X6
	VINSERTF128    $1, (R11)(R8*1), Y6, Y6
	VMOVUPD        (R11)(R8*2), X7
	VINSERTF128    $1, (R11)(R9*1), Y7, Y7
	VMULPD         Y8, Y4, Y4
	VMULPD         Y8, Y5, Y5
	VMULPD         Y8, Y6, Y6
	VMULPD         Y8, Y7, Y7
	VADDPD         Y4, Y0, Y0
	VADDPD         Y5, Y1, Y1
	VADDPD         Y6, Y2, Y2
	VADDPD         Y7, Y3, Y3
	ADDQ           $16, R10
	ADDQ           $16, R11
	ADDQ           $16, DI
	DECQ           CX
	JNZ            gemvn_loop

gemvn_store:
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	VZEROUPPER
	RET

// func gemvTBlockAVX2(rows, nchunks int, a *float64, lda int, coef, y *float64)
TEXT ·gemvTBlockAVX2(SB), NOSPLIT, $0-48
	MOVQ  rows+0(FP), R12
	MOVQ  nchunks+8(FP), R13
	MOVQ  a+16(FP), SI
	MOVQ  lda+24(FP), R8
	MOVQ  coef+32(FP), DI
	MOVQ  y+40(FP), DX
	TESTQ R12, R12
	JLE   gemvt_done
	TESTQ R13, R13
	JLE   gemvt_done

gemvt_chunk:
	VMOVUPD (DX), Y0
	VMOVUPD 32(DX), Y1
	VMOVUPD 64(DX), Y2
	VMOVUPD 96(DX), Y3
	MOVQ    SI, R10
	MOVQ    DI, R11
	MOVQ    R12, CX

gemvt_row:
	VBROADCASTSD (R11), Y4
	VMULPD       (R10), Y4, Y5
	VMULPD       32(R10), Y4, Y6
	VMULPD       64(R10), Y4, Y7
	VMULPD       96(R10), Y4, Y8
	VADDPD       Y5, Y0, Y0
	VADDPD       Y6, Y1, Y1
	VADDPD       Y7, Y2, Y2
	VADDPD       Y8, Y3, Y3
	ADDQ         R8, R10
	ADDQ         $8, R11
	DECQ         CX
	JNZ          gemvt_row

	VMOVUPD Y0, (DX)
	VMOVUPD Y1, 32(DX)
	VMOVUPD Y2, 64(DX)
	VMOVUPD Y3, 96(DX)
	ADDQ    $128, SI
	ADDQ    $128, DX
	DECQ    R13
	JNZ     gemvt_chunk

gemvt_done:
	VZEROUPPER
	RET
