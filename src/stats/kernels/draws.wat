;; The bootstrap's draw loops as WebAssembly: xoshiro128** 1.1 steps (Blackman & Vigna 2018,
;; https://prng.di.unimi.it/xoshiro128starstar.c) and Lemire's (2019) unbiased integers in [0, m),
;; for m in [1, 2^31]. src/stats/draw-kernels.ts is the JavaScript side and says what each function
;; draws; tests/stats/draw-kernels.test.ts checks every function draw by draw against `int(m)` of
;; src/stats/xoshiro128.ts.
;;
;; Lemire: p = x * m as a 64-bit product of the 32-bit draw x; the draw is rejected while
;; lo32(p) < (2^32 - m) mod m (probability < m / 2^32), else it is hi32(p). In 64-bit integers this
;; is exact for every m, so one path serves all m.
;;
;; Two kinds of function:
;;  - one stream (`sum_f64`, `sum_pair_f64`): k draws from the generator whose state is at bytes
;;    0..15 (s0, s1, s2, s3), summing tables at byte offsets `base`, `base2` (`sum_pair_f64`
;;    writes its second sum to bytes 64..71); the index resampler of ratioBootstrap.
;;  - four lanes (`sum4_i32`, `sum4_f64`, `count4_i32`): one resample of n draws made by four
;;    generators at once in 128-bit SIMD (i32x4). Lane L (0..3) holds generator L, stored
;;    transposed at bytes 0..63 (s0 of lanes 0..3 at 0..15, s1 at 16..31, s2 at 32..47, s3 at
;;    48..63), and makes floor(n / 4) draws, plus one when L < n mod 4. A lane whose draw is
;;    rejected owes one more; its debts are paid after the SIMD loop by `$lane_draw`, one lane
;;    at a time, so lane L's draws are exactly its generator's next accepted draws, in order. The
;;    table is at byte 128 (bytes 64..127 are scratch).
;;
;; Every loop keeps the state in locals (registers) and repeats the generator step inline: that
;; is what makes it fast, and WebAssembly text has no macros.
;;
;; Build: `npm run build:wasm` (wabt) writes src/stats/kernels/draws-wasm.ts; the test above checks
;; that those bytes are what this file assembles to.
(module
  (import "env" "memory" (memory 1))

  ;; sum_f64(base, m, k): the sum of k draws of the Float64 table at `base`, added in draw order
  ;; as doubles (bitwise what a JavaScript `sum += values[j]` loop gives).
  (func (export "sum_f64") (param $base i32) (param $m i32) (param $k i32) (result f64)
    (local $s0 i32) (local $s1 i32) (local $s2 i32) (local $s3 i32) (local $x i32) (local $t i32) (local $p i64) (local $mm i64) (local $thr i32)
    (local $i i32) (local $sum f64)
    (local.set $s0 (i32.load (i32.const 0)))
    (local.set $s1 (i32.load (i32.const 4)))
    (local.set $s2 (i32.load (i32.const 8)))
    (local.set $s3 (i32.load (i32.const 12)))
    (local.set $mm (i64.extend_i32_u (local.get $m)))
    (local.set $thr (i32.rem_u (i32.sub (i32.const 0) (local.get $m)) (local.get $m)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $k)))
        (local.set $x (i32.mul (i32.rotl (i32.mul (local.get $s1) (i32.const 5)) (i32.const 7)) (i32.const 9)))
        (local.set $t (i32.shl (local.get $s1) (i32.const 9)))
        (local.set $s2 (i32.xor (local.get $s2) (local.get $s0)))
        (local.set $s3 (i32.xor (local.get $s3) (local.get $s1)))
        (local.set $s1 (i32.xor (local.get $s1) (local.get $s2)))
        (local.set $s0 (i32.xor (local.get $s0) (local.get $s3)))
        (local.set $s2 (i32.xor (local.get $s2) (local.get $t)))
        (local.set $s3 (i32.rotl (local.get $s3) (i32.const 11)))
        (local.set $p (i64.mul (i64.extend_i32_u (local.get $x)) (local.get $mm)))
        (br_if $next (i32.lt_u (i32.wrap_i64 (local.get $p)) (local.get $thr)))
        (local.set $sum (f64.add (local.get $sum)
          (f64.load (i32.add (local.get $base) (i32.shl (i32.wrap_i64 (i64.shr_u (local.get $p) (i64.const 32))) (i32.const 3))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.store (i32.const 0) (local.get $s0))
    (i32.store (i32.const 4) (local.get $s1))
    (i32.store (i32.const 8) (local.get $s2))
    (i32.store (i32.const 12) (local.get $s3))
    (local.get $sum))

  ;; sum_pair_f64(base, base2, m, k): sum_f64 over two Float64 tables with the same draws (a ratio
  ;; of sums: cluster sums over cluster sizes); returns the first sum, writes the second to bytes
  ;; 64..71.
  (func (export "sum_pair_f64") (param $base i32) (param $base2 i32) (param $m i32) (param $k i32) (result f64)
    (local $s0 i32) (local $s1 i32) (local $s2 i32) (local $s3 i32) (local $x i32) (local $t i32) (local $p i64) (local $mm i64) (local $thr i32)
    (local $i i32) (local $sum f64) (local $sum2 f64) (local $off i32)
    (local.set $s0 (i32.load (i32.const 0)))
    (local.set $s1 (i32.load (i32.const 4)))
    (local.set $s2 (i32.load (i32.const 8)))
    (local.set $s3 (i32.load (i32.const 12)))
    (local.set $mm (i64.extend_i32_u (local.get $m)))
    (local.set $thr (i32.rem_u (i32.sub (i32.const 0) (local.get $m)) (local.get $m)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $k)))
        (local.set $x (i32.mul (i32.rotl (i32.mul (local.get $s1) (i32.const 5)) (i32.const 7)) (i32.const 9)))
        (local.set $t (i32.shl (local.get $s1) (i32.const 9)))
        (local.set $s2 (i32.xor (local.get $s2) (local.get $s0)))
        (local.set $s3 (i32.xor (local.get $s3) (local.get $s1)))
        (local.set $s1 (i32.xor (local.get $s1) (local.get $s2)))
        (local.set $s0 (i32.xor (local.get $s0) (local.get $s3)))
        (local.set $s2 (i32.xor (local.get $s2) (local.get $t)))
        (local.set $s3 (i32.rotl (local.get $s3) (i32.const 11)))
        (local.set $p (i64.mul (i64.extend_i32_u (local.get $x)) (local.get $mm)))
        (br_if $next (i32.lt_u (i32.wrap_i64 (local.get $p)) (local.get $thr)))
        (local.set $off (i32.shl (i32.wrap_i64 (i64.shr_u (local.get $p) (i64.const 32))) (i32.const 3)))
        (local.set $sum (f64.add (local.get $sum) (f64.load (i32.add (local.get $base) (local.get $off)))))
        (local.set $sum2 (f64.add (local.get $sum2) (f64.load (i32.add (local.get $base2) (local.get $off)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.store (i32.const 0) (local.get $s0))
    (i32.store (i32.const 4) (local.get $s1))
    (i32.store (i32.const 8) (local.get $s2))
    (i32.store (i32.const 12) (local.get $s3))
    (f64.store (i32.const 64) (local.get $sum2))
    (local.get $sum))

  ;; $lane_draw(L, mm, thr): one accepted draw from lane L's generator in memory (state updated
  ;; there): how the four-lane functions pay a lane's debts.
  (func $lane_draw (param $L i32) (param $mm i64) (param $thr i32) (result i32)
    (local $a i32) (local $s0 i32) (local $s1 i32) (local $s2 i32) (local $s3 i32) (local $x i32) (local $t i32) (local $p i64)
    (local.set $a (i32.shl (local.get $L) (i32.const 2)))
    (local.set $s0 (i32.load offset=0 (local.get $a)))
    (local.set $s1 (i32.load offset=16 (local.get $a)))
    (local.set $s2 (i32.load offset=32 (local.get $a)))
    (local.set $s3 (i32.load offset=48 (local.get $a)))
    (loop $again
      (local.set $x (i32.mul (i32.rotl (i32.mul (local.get $s1) (i32.const 5)) (i32.const 7)) (i32.const 9)))
      (local.set $t (i32.shl (local.get $s1) (i32.const 9)))
      (local.set $s2 (i32.xor (local.get $s2) (local.get $s0)))
      (local.set $s3 (i32.xor (local.get $s3) (local.get $s1)))
      (local.set $s1 (i32.xor (local.get $s1) (local.get $s2)))
      (local.set $s0 (i32.xor (local.get $s0) (local.get $s3)))
      (local.set $s2 (i32.xor (local.get $s2) (local.get $t)))
      (local.set $s3 (i32.rotl (local.get $s3) (i32.const 11)))
      (local.set $p (i64.mul (i64.extend_i32_u (local.get $x)) (local.get $mm)))
      (br_if $again (i32.lt_u (i32.wrap_i64 (local.get $p)) (local.get $thr))))
    (i32.store offset=0 (local.get $a) (local.get $s0))
    (i32.store offset=16 (local.get $a) (local.get $s1))
    (i32.store offset=32 (local.get $a) (local.get $s2))
    (i32.store offset=48 (local.get $a) (local.get $s3))
    (i32.wrap_i64 (i64.shr_u (local.get $p) (i64.const 32))))

  ;; sum4_i32(m, n): one resample of n draws over four lanes from the Int32 table at byte 128: the
  ;; sum of the drawn values (64-bit integers, exact; returned as a double, exact below 2^53).
  (func (export "sum4_i32") (param $m i32) (param $n i32) (result f64)
    (local $S0 v128) (local $S1 v128) (local $S2 v128) (local $S3 v128)
    (local $x v128) (local $t v128) (local $r v128) (local $lo v128) (local $hi v128) (local $j v128)
    (local $M v128) (local $THR v128) (local $mm i64) (local $thr i32) (local $it i32)
    (local $d0 i32) (local $d1 i32) (local $d2 i32) (local $d3 i32) (local $a0 i64) (local $a1 i64) (local $a2 i64) (local $a3 i64)
    (local.set $S0 (v128.load (i32.const 0)))
    (local.set $S1 (v128.load (i32.const 16)))
    (local.set $S2 (v128.load (i32.const 32)))
    (local.set $S3 (v128.load (i32.const 48)))
    (local.set $mm (i64.extend_i32_u (local.get $m)))
    (local.set $thr (i32.rem_u (i32.sub (i32.const 0) (local.get $m)) (local.get $m)))
    (local.set $M (i32x4.splat (local.get $m)))
    (local.set $THR (i32x4.splat (local.get $thr)))
    ;; n = 4 it + rest: the first `rest` lanes owe one draw each from the start
    (local.set $it (i32.shr_u (local.get $n) (i32.const 2)))
    (local.set $d0 (i32.gt_u (i32.and (local.get $n) (i32.const 3)) (i32.const 0)))
    (local.set $d1 (i32.gt_u (i32.and (local.get $n) (i32.const 3)) (i32.const 1)))
    (local.set $d2 (i32.gt_u (i32.and (local.get $n) (i32.const 3)) (i32.const 2)))
    (block $done
      (br_if $done (i32.eqz (local.get $it)))
      (loop $next
        (local.set $r (i32x4.mul (local.get $S1) (v128.const i32x4 5 5 5 5)))
        (local.set $x (i32x4.mul (v128.or (i32x4.shl (local.get $r) (i32.const 7)) (i32x4.shr_u (local.get $r) (i32.const 25))) (v128.const i32x4 9 9 9 9)))
        (local.set $t (i32x4.shl (local.get $S1) (i32.const 9)))
        (local.set $S2 (v128.xor (local.get $S2) (local.get $S0)))
        (local.set $S3 (v128.xor (local.get $S3) (local.get $S1)))
        (local.set $S1 (v128.xor (local.get $S1) (local.get $S2)))
        (local.set $S0 (v128.xor (local.get $S0) (local.get $S3)))
        (local.set $S2 (v128.xor (local.get $S2) (local.get $t)))
        (local.set $S3 (v128.or (i32x4.shl (local.get $S3) (i32.const 11)) (i32x4.shr_u (local.get $S3) (i32.const 21))))
        ;; the four 64-bit products x * m: low words (for the rejection test) and high words (the draws)
        (local.set $lo (i64x2.extmul_low_i32x4_u (local.get $x) (local.get $M)))
        (local.set $hi (i64x2.extmul_high_i32x4_u (local.get $x) (local.get $M)))
        (local.set $j (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $lo) (local.get $hi)))
        (local.set $lo (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $lo) (local.get $hi)))
        (if (v128.any_true (i32x4.lt_u (local.get $lo) (local.get $THR)))
          (then
          ;; rare (probability < 4 m / 2^32): a rejected lane owes a draw, the others use theirs
          (if (i32.lt_u (i32x4.extract_lane 0 (local.get $lo)) (local.get $thr))
            (then (local.set $d0 (i32.add (local.get $d0) (i32.const 1))))
            (else (local.set $a0 (i64.add (local.get $a0) (i64.extend_i32_s (i32.load offset=128 (i32.shl (i32x4.extract_lane 0 (local.get $j)) (i32.const 2))))))))
          (if (i32.lt_u (i32x4.extract_lane 1 (local.get $lo)) (local.get $thr))
            (then (local.set $d1 (i32.add (local.get $d1) (i32.const 1))))
            (else (local.set $a1 (i64.add (local.get $a1) (i64.extend_i32_s (i32.load offset=128 (i32.shl (i32x4.extract_lane 1 (local.get $j)) (i32.const 2))))))))
          (if (i32.lt_u (i32x4.extract_lane 2 (local.get $lo)) (local.get $thr))
            (then (local.set $d2 (i32.add (local.get $d2) (i32.const 1))))
            (else (local.set $a2 (i64.add (local.get $a2) (i64.extend_i32_s (i32.load offset=128 (i32.shl (i32x4.extract_lane 2 (local.get $j)) (i32.const 2))))))))
          (if (i32.lt_u (i32x4.extract_lane 3 (local.get $lo)) (local.get $thr))
            (then (local.set $d3 (i32.add (local.get $d3) (i32.const 1))))
            (else (local.set $a3 (i64.add (local.get $a3) (i64.extend_i32_s (i32.load offset=128 (i32.shl (i32x4.extract_lane 3 (local.get $j)) (i32.const 2))))))))
          )
          (else
          (local.set $a0 (i64.add (local.get $a0) (i64.extend_i32_s (i32.load offset=128 (i32.shl (i32x4.extract_lane 0 (local.get $j)) (i32.const 2))))))
          (local.set $a1 (i64.add (local.get $a1) (i64.extend_i32_s (i32.load offset=128 (i32.shl (i32x4.extract_lane 1 (local.get $j)) (i32.const 2))))))
          (local.set $a2 (i64.add (local.get $a2) (i64.extend_i32_s (i32.load offset=128 (i32.shl (i32x4.extract_lane 2 (local.get $j)) (i32.const 2))))))
          (local.set $a3 (i64.add (local.get $a3) (i64.extend_i32_s (i32.load offset=128 (i32.shl (i32x4.extract_lane 3 (local.get $j)) (i32.const 2))))))
          ))
        (local.set $it (i32.sub (local.get $it) (i32.const 1)))
        (br_if $next (local.get $it))))
    (v128.store (i32.const 0) (local.get $S0))
    (v128.store (i32.const 16) (local.get $S1))
    (v128.store (i32.const 32) (local.get $S2))
    (v128.store (i32.const 48) (local.get $S3))
    ;; the debts, lane by lane, from each lane's state in memory
    (block $paid0
      (loop $pay0
        (br_if $paid0 (i32.eqz (local.get $d0)))
        (local.set $a0 (i64.add (local.get $a0) (i64.extend_i32_s (i32.load offset=128 (i32.shl (call $lane_draw (i32.const 0) (local.get $mm) (local.get $thr)) (i32.const 2))))))
        (local.set $d0 (i32.sub (local.get $d0) (i32.const 1)))
        (br $pay0)))
    (block $paid1
      (loop $pay1
        (br_if $paid1 (i32.eqz (local.get $d1)))
        (local.set $a1 (i64.add (local.get $a1) (i64.extend_i32_s (i32.load offset=128 (i32.shl (call $lane_draw (i32.const 1) (local.get $mm) (local.get $thr)) (i32.const 2))))))
        (local.set $d1 (i32.sub (local.get $d1) (i32.const 1)))
        (br $pay1)))
    (block $paid2
      (loop $pay2
        (br_if $paid2 (i32.eqz (local.get $d2)))
        (local.set $a2 (i64.add (local.get $a2) (i64.extend_i32_s (i32.load offset=128 (i32.shl (call $lane_draw (i32.const 2) (local.get $mm) (local.get $thr)) (i32.const 2))))))
        (local.set $d2 (i32.sub (local.get $d2) (i32.const 1)))
        (br $pay2)))
    (block $paid3
      (loop $pay3
        (br_if $paid3 (i32.eqz (local.get $d3)))
        (local.set $a3 (i64.add (local.get $a3) (i64.extend_i32_s (i32.load offset=128 (i32.shl (call $lane_draw (i32.const 3) (local.get $mm) (local.get $thr)) (i32.const 2))))))
        (local.set $d3 (i32.sub (local.get $d3) (i32.const 1)))
        (br $pay3)))
    (f64.convert_i64_s (i64.add (i64.add (local.get $a0) (local.get $a1)) (i64.add (local.get $a2) (local.get $a3)))))

  ;; sum4_f64(m, n): the same over the Float64 table at byte 128, as doubles: each lane adds its
  ;; draws in its draw order; the result is (lane 0 + lane 1) + (lane 2 + lane 3).
  (func (export "sum4_f64") (param $m i32) (param $n i32) (result f64)
    (local $S0 v128) (local $S1 v128) (local $S2 v128) (local $S3 v128)
    (local $x v128) (local $t v128) (local $r v128) (local $lo v128) (local $hi v128) (local $j v128)
    (local $M v128) (local $THR v128) (local $mm i64) (local $thr i32) (local $it i32)
    (local $d0 i32) (local $d1 i32) (local $d2 i32) (local $d3 i32) (local $a0 f64) (local $a1 f64) (local $a2 f64) (local $a3 f64)
    (local.set $S0 (v128.load (i32.const 0)))
    (local.set $S1 (v128.load (i32.const 16)))
    (local.set $S2 (v128.load (i32.const 32)))
    (local.set $S3 (v128.load (i32.const 48)))
    (local.set $mm (i64.extend_i32_u (local.get $m)))
    (local.set $thr (i32.rem_u (i32.sub (i32.const 0) (local.get $m)) (local.get $m)))
    (local.set $M (i32x4.splat (local.get $m)))
    (local.set $THR (i32x4.splat (local.get $thr)))
    ;; n = 4 it + rest: the first `rest` lanes owe one draw each from the start
    (local.set $it (i32.shr_u (local.get $n) (i32.const 2)))
    (local.set $d0 (i32.gt_u (i32.and (local.get $n) (i32.const 3)) (i32.const 0)))
    (local.set $d1 (i32.gt_u (i32.and (local.get $n) (i32.const 3)) (i32.const 1)))
    (local.set $d2 (i32.gt_u (i32.and (local.get $n) (i32.const 3)) (i32.const 2)))
    (block $done
      (br_if $done (i32.eqz (local.get $it)))
      (loop $next
        (local.set $r (i32x4.mul (local.get $S1) (v128.const i32x4 5 5 5 5)))
        (local.set $x (i32x4.mul (v128.or (i32x4.shl (local.get $r) (i32.const 7)) (i32x4.shr_u (local.get $r) (i32.const 25))) (v128.const i32x4 9 9 9 9)))
        (local.set $t (i32x4.shl (local.get $S1) (i32.const 9)))
        (local.set $S2 (v128.xor (local.get $S2) (local.get $S0)))
        (local.set $S3 (v128.xor (local.get $S3) (local.get $S1)))
        (local.set $S1 (v128.xor (local.get $S1) (local.get $S2)))
        (local.set $S0 (v128.xor (local.get $S0) (local.get $S3)))
        (local.set $S2 (v128.xor (local.get $S2) (local.get $t)))
        (local.set $S3 (v128.or (i32x4.shl (local.get $S3) (i32.const 11)) (i32x4.shr_u (local.get $S3) (i32.const 21))))
        ;; the four 64-bit products x * m: low words (for the rejection test) and high words (the draws)
        (local.set $lo (i64x2.extmul_low_i32x4_u (local.get $x) (local.get $M)))
        (local.set $hi (i64x2.extmul_high_i32x4_u (local.get $x) (local.get $M)))
        (local.set $j (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $lo) (local.get $hi)))
        (local.set $lo (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $lo) (local.get $hi)))
        (if (v128.any_true (i32x4.lt_u (local.get $lo) (local.get $THR)))
          (then
          ;; rare (probability < 4 m / 2^32): a rejected lane owes a draw, the others use theirs
          (if (i32.lt_u (i32x4.extract_lane 0 (local.get $lo)) (local.get $thr))
            (then (local.set $d0 (i32.add (local.get $d0) (i32.const 1))))
            (else (local.set $a0 (f64.add (local.get $a0) (f64.load offset=128 (i32.shl (i32x4.extract_lane 0 (local.get $j)) (i32.const 3)))))))
          (if (i32.lt_u (i32x4.extract_lane 1 (local.get $lo)) (local.get $thr))
            (then (local.set $d1 (i32.add (local.get $d1) (i32.const 1))))
            (else (local.set $a1 (f64.add (local.get $a1) (f64.load offset=128 (i32.shl (i32x4.extract_lane 1 (local.get $j)) (i32.const 3)))))))
          (if (i32.lt_u (i32x4.extract_lane 2 (local.get $lo)) (local.get $thr))
            (then (local.set $d2 (i32.add (local.get $d2) (i32.const 1))))
            (else (local.set $a2 (f64.add (local.get $a2) (f64.load offset=128 (i32.shl (i32x4.extract_lane 2 (local.get $j)) (i32.const 3)))))))
          (if (i32.lt_u (i32x4.extract_lane 3 (local.get $lo)) (local.get $thr))
            (then (local.set $d3 (i32.add (local.get $d3) (i32.const 1))))
            (else (local.set $a3 (f64.add (local.get $a3) (f64.load offset=128 (i32.shl (i32x4.extract_lane 3 (local.get $j)) (i32.const 3)))))))
          )
          (else
          (local.set $a0 (f64.add (local.get $a0) (f64.load offset=128 (i32.shl (i32x4.extract_lane 0 (local.get $j)) (i32.const 3)))))
          (local.set $a1 (f64.add (local.get $a1) (f64.load offset=128 (i32.shl (i32x4.extract_lane 1 (local.get $j)) (i32.const 3)))))
          (local.set $a2 (f64.add (local.get $a2) (f64.load offset=128 (i32.shl (i32x4.extract_lane 2 (local.get $j)) (i32.const 3)))))
          (local.set $a3 (f64.add (local.get $a3) (f64.load offset=128 (i32.shl (i32x4.extract_lane 3 (local.get $j)) (i32.const 3)))))
          ))
        (local.set $it (i32.sub (local.get $it) (i32.const 1)))
        (br_if $next (local.get $it))))
    (v128.store (i32.const 0) (local.get $S0))
    (v128.store (i32.const 16) (local.get $S1))
    (v128.store (i32.const 32) (local.get $S2))
    (v128.store (i32.const 48) (local.get $S3))
    ;; the debts, lane by lane, from each lane's state in memory
    (block $paid0
      (loop $pay0
        (br_if $paid0 (i32.eqz (local.get $d0)))
        (local.set $a0 (f64.add (local.get $a0) (f64.load offset=128 (i32.shl (call $lane_draw (i32.const 0) (local.get $mm) (local.get $thr)) (i32.const 3)))))
        (local.set $d0 (i32.sub (local.get $d0) (i32.const 1)))
        (br $pay0)))
    (block $paid1
      (loop $pay1
        (br_if $paid1 (i32.eqz (local.get $d1)))
        (local.set $a1 (f64.add (local.get $a1) (f64.load offset=128 (i32.shl (call $lane_draw (i32.const 1) (local.get $mm) (local.get $thr)) (i32.const 3)))))
        (local.set $d1 (i32.sub (local.get $d1) (i32.const 1)))
        (br $pay1)))
    (block $paid2
      (loop $pay2
        (br_if $paid2 (i32.eqz (local.get $d2)))
        (local.set $a2 (f64.add (local.get $a2) (f64.load offset=128 (i32.shl (call $lane_draw (i32.const 2) (local.get $mm) (local.get $thr)) (i32.const 3)))))
        (local.set $d2 (i32.sub (local.get $d2) (i32.const 1)))
        (br $pay2)))
    (block $paid3
      (loop $pay3
        (br_if $paid3 (i32.eqz (local.get $d3)))
        (local.set $a3 (f64.add (local.get $a3) (f64.load offset=128 (i32.shl (call $lane_draw (i32.const 3) (local.get $mm) (local.get $thr)) (i32.const 3)))))
        (local.set $d3 (i32.sub (local.get $d3) (i32.const 1)))
        (br $pay3)))
    (f64.add (f64.add (local.get $a0) (local.get $a1)) (f64.add (local.get $a2) (local.get $a3))))

  ;; count4_i32(m, n): one resample of n draws over four lanes, adding 1 to the Int32 count at
  ;; byte 128 + 4 j for each draw j.
  (func (export "count4_i32") (param $m i32) (param $n i32)
    (local $S0 v128) (local $S1 v128) (local $S2 v128) (local $S3 v128)
    (local $x v128) (local $t v128) (local $r v128) (local $lo v128) (local $hi v128) (local $j v128)
    (local $M v128) (local $THR v128) (local $mm i64) (local $thr i32) (local $it i32)
    (local $d0 i32) (local $d1 i32) (local $d2 i32) (local $d3 i32) (local $c i32)
    (local.set $S0 (v128.load (i32.const 0)))
    (local.set $S1 (v128.load (i32.const 16)))
    (local.set $S2 (v128.load (i32.const 32)))
    (local.set $S3 (v128.load (i32.const 48)))
    (local.set $mm (i64.extend_i32_u (local.get $m)))
    (local.set $thr (i32.rem_u (i32.sub (i32.const 0) (local.get $m)) (local.get $m)))
    (local.set $M (i32x4.splat (local.get $m)))
    (local.set $THR (i32x4.splat (local.get $thr)))
    ;; n = 4 it + rest: the first `rest` lanes owe one draw each from the start
    (local.set $it (i32.shr_u (local.get $n) (i32.const 2)))
    (local.set $d0 (i32.gt_u (i32.and (local.get $n) (i32.const 3)) (i32.const 0)))
    (local.set $d1 (i32.gt_u (i32.and (local.get $n) (i32.const 3)) (i32.const 1)))
    (local.set $d2 (i32.gt_u (i32.and (local.get $n) (i32.const 3)) (i32.const 2)))
    (block $done
      (br_if $done (i32.eqz (local.get $it)))
      (loop $next
        (local.set $r (i32x4.mul (local.get $S1) (v128.const i32x4 5 5 5 5)))
        (local.set $x (i32x4.mul (v128.or (i32x4.shl (local.get $r) (i32.const 7)) (i32x4.shr_u (local.get $r) (i32.const 25))) (v128.const i32x4 9 9 9 9)))
        (local.set $t (i32x4.shl (local.get $S1) (i32.const 9)))
        (local.set $S2 (v128.xor (local.get $S2) (local.get $S0)))
        (local.set $S3 (v128.xor (local.get $S3) (local.get $S1)))
        (local.set $S1 (v128.xor (local.get $S1) (local.get $S2)))
        (local.set $S0 (v128.xor (local.get $S0) (local.get $S3)))
        (local.set $S2 (v128.xor (local.get $S2) (local.get $t)))
        (local.set $S3 (v128.or (i32x4.shl (local.get $S3) (i32.const 11)) (i32x4.shr_u (local.get $S3) (i32.const 21))))
        ;; the four 64-bit products x * m: low words (for the rejection test) and high words (the draws)
        (local.set $lo (i64x2.extmul_low_i32x4_u (local.get $x) (local.get $M)))
        (local.set $hi (i64x2.extmul_high_i32x4_u (local.get $x) (local.get $M)))
        (local.set $j (i8x16.shuffle 4 5 6 7 12 13 14 15 20 21 22 23 28 29 30 31 (local.get $lo) (local.get $hi)))
        (local.set $lo (i8x16.shuffle 0 1 2 3 8 9 10 11 16 17 18 19 24 25 26 27 (local.get $lo) (local.get $hi)))
        (if (v128.any_true (i32x4.lt_u (local.get $lo) (local.get $THR)))
          (then
          ;; rare (probability < 4 m / 2^32): a rejected lane owes a draw, the others use theirs
          (if (i32.lt_u (i32x4.extract_lane 0 (local.get $lo)) (local.get $thr))
            (then (local.set $d0 (i32.add (local.get $d0) (i32.const 1))))
            (else (local.set $c (i32.shl (i32x4.extract_lane 0 (local.get $j)) (i32.const 2))) (i32.store offset=128 (local.get $c) (i32.add (i32.load offset=128 (local.get $c)) (i32.const 1)))))
          (if (i32.lt_u (i32x4.extract_lane 1 (local.get $lo)) (local.get $thr))
            (then (local.set $d1 (i32.add (local.get $d1) (i32.const 1))))
            (else (local.set $c (i32.shl (i32x4.extract_lane 1 (local.get $j)) (i32.const 2))) (i32.store offset=128 (local.get $c) (i32.add (i32.load offset=128 (local.get $c)) (i32.const 1)))))
          (if (i32.lt_u (i32x4.extract_lane 2 (local.get $lo)) (local.get $thr))
            (then (local.set $d2 (i32.add (local.get $d2) (i32.const 1))))
            (else (local.set $c (i32.shl (i32x4.extract_lane 2 (local.get $j)) (i32.const 2))) (i32.store offset=128 (local.get $c) (i32.add (i32.load offset=128 (local.get $c)) (i32.const 1)))))
          (if (i32.lt_u (i32x4.extract_lane 3 (local.get $lo)) (local.get $thr))
            (then (local.set $d3 (i32.add (local.get $d3) (i32.const 1))))
            (else (local.set $c (i32.shl (i32x4.extract_lane 3 (local.get $j)) (i32.const 2))) (i32.store offset=128 (local.get $c) (i32.add (i32.load offset=128 (local.get $c)) (i32.const 1)))))
          )
          (else
          (local.set $c (i32.shl (i32x4.extract_lane 0 (local.get $j)) (i32.const 2))) (i32.store offset=128 (local.get $c) (i32.add (i32.load offset=128 (local.get $c)) (i32.const 1)))
          (local.set $c (i32.shl (i32x4.extract_lane 1 (local.get $j)) (i32.const 2))) (i32.store offset=128 (local.get $c) (i32.add (i32.load offset=128 (local.get $c)) (i32.const 1)))
          (local.set $c (i32.shl (i32x4.extract_lane 2 (local.get $j)) (i32.const 2))) (i32.store offset=128 (local.get $c) (i32.add (i32.load offset=128 (local.get $c)) (i32.const 1)))
          (local.set $c (i32.shl (i32x4.extract_lane 3 (local.get $j)) (i32.const 2))) (i32.store offset=128 (local.get $c) (i32.add (i32.load offset=128 (local.get $c)) (i32.const 1)))
          ))
        (local.set $it (i32.sub (local.get $it) (i32.const 1)))
        (br_if $next (local.get $it))))
    (v128.store (i32.const 0) (local.get $S0))
    (v128.store (i32.const 16) (local.get $S1))
    (v128.store (i32.const 32) (local.get $S2))
    (v128.store (i32.const 48) (local.get $S3))
    ;; the debts, lane by lane, from each lane's state in memory
    (block $paid0
      (loop $pay0
        (br_if $paid0 (i32.eqz (local.get $d0)))
        (local.set $c (i32.shl (call $lane_draw (i32.const 0) (local.get $mm) (local.get $thr)) (i32.const 2))) (i32.store offset=128 (local.get $c) (i32.add (i32.load offset=128 (local.get $c)) (i32.const 1)))
        (local.set $d0 (i32.sub (local.get $d0) (i32.const 1)))
        (br $pay0)))
    (block $paid1
      (loop $pay1
        (br_if $paid1 (i32.eqz (local.get $d1)))
        (local.set $c (i32.shl (call $lane_draw (i32.const 1) (local.get $mm) (local.get $thr)) (i32.const 2))) (i32.store offset=128 (local.get $c) (i32.add (i32.load offset=128 (local.get $c)) (i32.const 1)))
        (local.set $d1 (i32.sub (local.get $d1) (i32.const 1)))
        (br $pay1)))
    (block $paid2
      (loop $pay2
        (br_if $paid2 (i32.eqz (local.get $d2)))
        (local.set $c (i32.shl (call $lane_draw (i32.const 2) (local.get $mm) (local.get $thr)) (i32.const 2))) (i32.store offset=128 (local.get $c) (i32.add (i32.load offset=128 (local.get $c)) (i32.const 1)))
        (local.set $d2 (i32.sub (local.get $d2) (i32.const 1)))
        (br $pay2)))
    (block $paid3
      (loop $pay3
        (br_if $paid3 (i32.eqz (local.get $d3)))
        (local.set $c (i32.shl (call $lane_draw (i32.const 3) (local.get $mm) (local.get $thr)) (i32.const 2))) (i32.store offset=128 (local.get $c) (i32.add (i32.load offset=128 (local.get $c)) (i32.const 1)))
        (local.set $d3 (i32.sub (local.get $d3) (i32.const 1)))
        (br $pay3)))
)
)
