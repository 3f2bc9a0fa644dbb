;; Line feeds counted with 128-bit SIMD, for the CSV byte scan (src/store/csv-lines.ts).
;;
;; The memory is imported (`env.memory`, fixed size: it never grows, so the scan's read buffer over
;; it stays valid). `count(p, n)` returns how many bytes of [p, p + n) are 10 (LF): 16 bytes at a
;; time, each lane of an i8x16 accumulator counting its matches (eq gives -1, subtracted) for at
;; most 255 blocks before the lanes are widened and added to an i32x4 total (no lane overflows);
;; the last n mod 16 bytes one by one.
(module
  (import "env" "memory" (memory 1))
  (func (export "count") (param $p i32) (param $n i32) (result i32)
    (local $stop i32) (local $end i32) (local $k i32) (local $c i32)
    (local $acc v128) (local $tot v128)
    (local.set $stop (i32.add (local.get $p) (local.get $n)))
    (local.set $end (i32.add (local.get $p) (i32.and (local.get $n) (i32.const -16))))
    (block $blocks
      (loop $round
        (br_if $blocks (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $acc (v128.const i64x2 0 0))
        (local.set $k (i32.const 255))
        (loop $inner
          (local.set $acc
            (i8x16.sub (local.get $acc)
              (i8x16.eq (v128.load (local.get $p)) (v128.const i8x16 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10))))
          (local.set $p (i32.add (local.get $p) (i32.const 16)))
          (local.set $k (i32.sub (local.get $k) (i32.const 1)))
          (br_if $inner (i32.and (i32.ne (local.get $k) (i32.const 0)) (i32.lt_u (local.get $p) (local.get $end)))))
        (local.set $tot
          (i32x4.add (local.get $tot)
            (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (local.get $acc)))))
        (br $round)))
    (local.set $c
      (i32.add
        (i32.add (i32x4.extract_lane 0 (local.get $tot)) (i32x4.extract_lane 1 (local.get $tot)))
        (i32.add (i32x4.extract_lane 2 (local.get $tot)) (i32x4.extract_lane 3 (local.get $tot)))))
    (block $tail
      (loop $bytes
        (br_if $tail (i32.ge_u (local.get $p) (local.get $stop)))
        (local.set $c (i32.add (local.get $c) (i32.eq (i32.load8_u (local.get $p)) (i32.const 10))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $bytes)))
    (local.get $c)))
