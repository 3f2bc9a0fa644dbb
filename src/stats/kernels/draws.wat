;; The bootstrap's draw loops as WebAssembly: xoshiro128** 1.1 steps (Blackman & Vigna 2018,
;; https://prng.di.unimi.it/xoshiro128starstar.c) and Lemire's (2019) unbiased integers in [0, m),
;; for m in [1, 2^31]. Each function consumes the generator exactly as k accepted `int(m)` calls
;; of src/stats/xoshiro128.ts would (tests/stats/draw-kernels.test.ts checks it draw by draw).
;;
;; Memory (imported, one per kernel; src/stats/draw-kernels.ts lays it out):
;;   bytes 0..15   the generator state s0..s3 (read at entry, written back at exit)
;;   bytes 16..23  sum_pair_f64's second sum
;;   bytes 32..    the tables a call names by their byte offsets `base`, `base2`
;;
;; Lemire: p = x * m as a 64-bit product of the 32-bit draw x; reject while lo32(p) < (2^32 - m)
;; mod m (probability < m / 2^32), else the draw is hi32(p). In 64-bit integers this is exact for
;; every m, so one path serves all m (the JavaScript loops needed a 16-bit split above 2^21).
;;
;; The four functions repeat the generator step and the draw inline, as the JavaScript loops did:
;; the state stays in locals (registers) for the whole loop, which is what makes them fast.
;;
;; Build: `npm run build:wasm` (wabt) writes src/stats/kernels/draws-wasm.ts; the test above checks
;; that those bytes are what this file assembles to.
(module
  (import "env" "memory" (memory 1))

  ;; sum_i32(base, m, k): the sum of k draws of the Int32 table at `base`, added in draw order
  ;; (64-bit integer sum, exact; returned as a double, exact below 2^53).
  (func (export "sum_i32") (param $base i32) (param $m i32) (param $k i32) (result f64)
    (local $s0 i32) (local $s1 i32) (local $s2 i32) (local $s3 i32)
    (local $x i32) (local $t i32) (local $p i64) (local $mm i64) (local $thr i32)
    (local $i i32) (local $sum i64)
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
        (local.set $sum (i64.add (local.get $sum)
          (i64.extend_i32_s (i32.load (i32.add (local.get $base)
            (i32.shl (i32.wrap_i64 (i64.shr_u (local.get $p) (i64.const 32))) (i32.const 2)))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.store (i32.const 0) (local.get $s0))
    (i32.store (i32.const 4) (local.get $s1))
    (i32.store (i32.const 8) (local.get $s2))
    (i32.store (i32.const 12) (local.get $s3))
    (f64.convert_i64_s (local.get $sum)))

  ;; sum_f64(base, m, k): the sum of k draws of the Float64 table at `base`, added in draw order
  ;; as doubles (bitwise what a JavaScript `sum += values[j]` loop gives).
  (func (export "sum_f64") (param $base i32) (param $m i32) (param $k i32) (result f64)
    (local $s0 i32) (local $s1 i32) (local $s2 i32) (local $s3 i32)
    (local $x i32) (local $t i32) (local $p i64) (local $mm i64) (local $thr i32)
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
          (f64.load (i32.add (local.get $base)
            (i32.shl (i32.wrap_i64 (i64.shr_u (local.get $p) (i64.const 32))) (i32.const 3))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.store (i32.const 0) (local.get $s0))
    (i32.store (i32.const 4) (local.get $s1))
    (i32.store (i32.const 8) (local.get $s2))
    (i32.store (i32.const 12) (local.get $s3))
    (local.get $sum))

  ;; sum_pair_f64(base, base2, m, k): sum_f64 over two Float64 tables with the same draws (a ratio
  ;; of sums: cluster sums over cluster sizes); returns the first sum, writes the second to bytes
  ;; 16..23.
  (func (export "sum_pair_f64") (param $base i32) (param $base2 i32) (param $m i32) (param $k i32) (result f64)
    (local $s0 i32) (local $s1 i32) (local $s2 i32) (local $s3 i32)
    (local $x i32) (local $t i32) (local $p i64) (local $mm i64) (local $thr i32)
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
    (f64.store (i32.const 16) (local.get $sum2))
    (local.get $sum))

  ;; count_i32(base, m, k): adds 1 to the Int32 count at `base` + 4 j for each of k draws j.
  (func (export "count_i32") (param $base i32) (param $m i32) (param $k i32)
    (local $s0 i32) (local $s1 i32) (local $s2 i32) (local $s3 i32)
    (local $x i32) (local $t i32) (local $p i64) (local $mm i64) (local $thr i32)
    (local $i i32) (local $at i32)
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
        (local.set $at (i32.add (local.get $base)
          (i32.shl (i32.wrap_i64 (i64.shr_u (local.get $p) (i64.const 32))) (i32.const 2))))
        (i32.store (local.get $at) (i32.add (i32.load (local.get $at)) (i32.const 1)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (i32.store (i32.const 0) (local.get $s0))
    (i32.store (i32.const 4) (local.get $s1))
    (i32.store (i32.const 8) (local.get $s2))
    (i32.store (i32.const 12) (local.get $s3)))
)
