;; The CSV byte scan's fast-path test in one pass, 128-bit SIMD (src/store/csv-lines.ts).
;;
;; The memory is imported (`env.memory`, fixed size: it never grows, so the scan's read buffer over
;; it stays valid). `lines(p, n)` looks at [p, p + n): -1 when it holds a quote (34), a carriage
;; return (13) or a line feed followed by another (a blank line), else how many line feeds (10) it
;; holds. 16 bytes at a time while the block's next byte is still in range (the blank-line test
;; compares each byte with the one after it); each lane of an i8x16 accumulator counts its line
;; feeds (eq gives -1, subtracted) for at most 255 blocks before the lanes are widened and added
;; to an i32x4 total (no lane overflows); the last bytes one by one.
(module
  (import "env" "memory" (memory 1))
  (func (export "lines") (param $p i32) (param $n i32) (result i32)
    (local $stop i32) (local $k i32) (local $c i32) (local $b i32)
    (local $v v128) (local $lf v128) (local $acc v128) (local $tot v128) (local $bad v128)
    (local.set $stop (i32.add (local.get $p) (local.get $n)))
    (block $blocks
      (loop $round
        (br_if $blocks (i32.ge_u (i32.add (local.get $p) (i32.const 16)) (local.get $stop)))
        (local.set $acc (v128.const i64x2 0 0))
        (local.set $k (i32.const 255))
        (loop $inner
          (local.set $v (v128.load (local.get $p)))
          (local.set $lf (i8x16.eq (local.get $v) (v128.const i8x16 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10)))
          (local.set $bad
            (v128.or (local.get $bad)
              (v128.or
                (v128.or
                  (i8x16.eq (local.get $v) (v128.const i8x16 34 34 34 34 34 34 34 34 34 34 34 34 34 34 34 34))
                  (i8x16.eq (local.get $v) (v128.const i8x16 13 13 13 13 13 13 13 13 13 13 13 13 13 13 13 13)))
                (v128.and (local.get $lf)
                  (i8x16.eq (v128.load offset=1 (local.get $p)) (v128.const i8x16 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10))))))
          (local.set $acc (i8x16.sub (local.get $acc) (local.get $lf)))
          (local.set $p (i32.add (local.get $p) (i32.const 16)))
          (local.set $k (i32.sub (local.get $k) (i32.const 1)))
          (br_if $inner
            (i32.and (i32.ne (local.get $k) (i32.const 0))
              (i32.lt_u (i32.add (local.get $p) (i32.const 16)) (local.get $stop)))))
        (local.set $tot
          (i32x4.add (local.get $tot)
            (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (local.get $acc)))))
        (br $round)))
    (if (v128.any_true (local.get $bad)) (then (return (i32.const -1))))
    (local.set $c
      (i32.add
        (i32.add (i32x4.extract_lane 0 (local.get $tot)) (i32x4.extract_lane 1 (local.get $tot)))
        (i32.add (i32x4.extract_lane 2 (local.get $tot)) (i32x4.extract_lane 3 (local.get $tot)))))
    (block $tail
      (loop $bytes
        (br_if $tail (i32.ge_u (local.get $p) (local.get $stop)))
        (local.set $b (i32.load8_u (local.get $p)))
        (if (i32.or (i32.eq (local.get $b) (i32.const 34)) (i32.eq (local.get $b) (i32.const 13)))
          (then (return (i32.const -1))))
        (if (i32.eq (local.get $b) (i32.const 10))
          (then
            (local.set $c (i32.add (local.get $c) (i32.const 1)))
            ;; (nested: the byte after the range may lie past the end of the memory)
            (if (i32.lt_u (i32.add (local.get $p) (i32.const 1)) (local.get $stop))
              (then
                (if (i32.eq (i32.load8_u offset=1 (local.get $p)) (i32.const 10))
                  (then (return (i32.const -1))))))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $bytes)))
    (local.get $c)))
