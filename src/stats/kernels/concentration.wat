;; The permutation null of the error concentration (src/stats/error-concentration.ts) as
;; WebAssembly: all B permutations in one call. src/stats/concentration-kernel.ts is the JavaScript
;; side; tests/stats/concentration-kernel.test.ts checks the kernel permutation by permutation
;; against the JavaScript null (`concentrationNullJs`).
;;
;; The draws are those of `Mt19937Stream` (src/stats/rng.ts), i.e. of `createRng(seed).int(m)`:
;;  - MT19937 (Matsumoto & Nishimura 1998): the 624 state words at bytes 0..2495, twisted in place
;;    a block at a time (`$twist`: the same sequential in-place update as `refill`, four words at
;;    once in 128-bit SIMD where no word of the four reads another's new value), then all 624
;;    tempered, four at once, into bytes 2496..4991, which the draws read in order. The global $at
;;    is the byte offset of the next word (2496: twist first); JavaScript sets it and the state
;;    before the call.
;;  - Lemire (2019): p = x * m as a 64-bit product of the 32-bit word x; the word is rejected while
;;    lo32(p) < (2^32 - m) mod m, else the draw is hi32(p). JavaScript computes this in doubles for
;;    m <= 2^21 (after a first test lo32(p) < m, which every rejected word passes since the
;;    threshold is below m) and in BigInt above; in 64-bit integers it is one exact path for every
;;    m, with the same first test so the remainder is computed only when lo32(p) < m.
;;
;; Layout: bytes 0..4991 the MT state and its tempered block; 4992..4995 the `all` of the
;; permutation being counted; 5120..5375 the shuffle's 64 draws. At byte offsets chosen by the
;; JavaScript side: a subject table at $subj, 12 bytes a subject (offset of its state array, n =
;; facts-right states, L = errors); each state array holds the subject's facts-right state indices
;; and is permuted in place, carried from one permutation to the next as the JavaScript scratch
;; arrays are; a count table at $count (one byte a state when $wide is 0, else an Int32 a state;
;; all zeros, and left so); the output at $out, two Int32 a permutation: `on` (errors on states at
;; least k subjects fail) and `all` (states every subject fails).
;;
;; Uses 128-bit SIMD (the twist and tempering), which V8 (Node >= 16.4) runs on x86-64 with SSE4.1
;; and on arm64, as draws.wat does.
;;
;; Build: `npm run build:wasm` (wabt) writes src/stats/kernels/concentration-wasm.ts; the test
;; above checks that those bytes are what this file assembles to.
(module
  (import "env" "memory" (memory 1))
  (global $at (mut i32) (i32.const 2496))

  (func (export "set_at") (param $v i32) (global.set $at (local.get $v)))

  ;; $twist_word(K): state word K / 4 twisted in place (its neighbour and the word 397 on, mod 624).
  (func $twist_word (param $k i32)
    (local $y i32) (local $next i32) (local $far i32)
    (local.set $next (select (i32.const 0) (i32.add (local.get $k) (i32.const 4)) (i32.eq (local.get $k) (i32.const 2492))))
    (local.set $far (i32.add (local.get $k) (i32.const 1588)))
    (local.set $far (select (i32.sub (local.get $far) (i32.const 2496)) (local.get $far) (i32.ge_u (local.get $far) (i32.const 2496))))
    (local.set $y (i32.or (i32.and (i32.load (local.get $k)) (i32.const 0x80000000)) (i32.and (i32.load (local.get $next)) (i32.const 0x7fffffff))))
    (i32.store (local.get $k)
      (i32.xor (i32.xor (i32.load (local.get $far)) (i32.shr_u (local.get $y) (i32.const 1)))
        (i32.and (i32.sub (i32.const 0) (i32.and (local.get $y) (i32.const 1))) (i32.const 0x9908b0df)))))

  ;; $twist4(K, F): words K / 4 .. K / 4 + 3 twisted at once from the words at F (the four 397 on),
  ;; valid when none of the four reads a word the other three write: words 0..223 (F = K + 1588,
  ;; old words) and 228..619 (F = K - 908, words already twisted).
  (func $twist4 (param $k i32) (param $f i32)
    (local $y v128)
    (local.set $y (v128.or (v128.and (v128.load (local.get $k)) (v128.const i32x4 0x80000000 0x80000000 0x80000000 0x80000000))
      (v128.and (v128.load offset=4 (local.get $k)) (v128.const i32x4 0x7fffffff 0x7fffffff 0x7fffffff 0x7fffffff))))
    (v128.store (local.get $k)
      (v128.xor (v128.xor (v128.load (local.get $f)) (i32x4.shr_u (local.get $y) (i32.const 1)))
        (v128.and (i32x4.neg (v128.and (local.get $y) (v128.const i32x4 1 1 1 1))) (v128.const i32x4 0x9908b0df 0x9908b0df 0x9908b0df 0x9908b0df)))))

  ;; $twist: the next 624 state words, in place and in order (word k uses the new words below k),
  ;; four at a time where that order allows; then all 624 tempered into bytes 2496..4991.
  (func $twist
    (local $k i32) (local $x v128)
    (loop $lo
      (call $twist4 (local.get $k) (i32.add (local.get $k) (i32.const 1588)))
      (local.set $k (i32.add (local.get $k) (i32.const 16)))
      (br_if $lo (i32.lt_u (local.get $k) (i32.const 896))))
    (loop $mid
      (call $twist_word (local.get $k))
      (local.set $k (i32.add (local.get $k) (i32.const 4)))
      (br_if $mid (i32.lt_u (local.get $k) (i32.const 912))))
    (loop $hi
      (call $twist4 (local.get $k) (i32.sub (local.get $k) (i32.const 908)))
      (local.set $k (i32.add (local.get $k) (i32.const 16)))
      (br_if $hi (i32.lt_u (local.get $k) (i32.const 2480))))
    (loop $end
      (call $twist_word (local.get $k))
      (local.set $k (i32.add (local.get $k) (i32.const 4)))
      (br_if $end (i32.lt_u (local.get $k) (i32.const 2496))))
    (local.set $k (i32.const 0))
    (loop $temper
      (local.set $x (v128.load (local.get $k)))
      (local.set $x (v128.xor (local.get $x) (i32x4.shr_u (local.get $x) (i32.const 11))))
      (local.set $x (v128.xor (local.get $x) (v128.and (i32x4.shl (local.get $x) (i32.const 7)) (v128.const i32x4 0x9d2c5680 0x9d2c5680 0x9d2c5680 0x9d2c5680))))
      (local.set $x (v128.xor (local.get $x) (v128.and (i32x4.shl (local.get $x) (i32.const 15)) (v128.const i32x4 0xefc60000 0xefc60000 0xefc60000 0xefc60000))))
      (local.set $x (v128.xor (local.get $x) (i32x4.shr_u (local.get $x) (i32.const 18))))
      (v128.store offset=2496 (local.get $k) (local.get $x))
      (local.set $k (i32.add (local.get $k) (i32.const 16)))
      (br_if $temper (i32.lt_u (local.get $k) (i32.const 2496)))))

  ;; $shuffle(r, n, L): the partial Fisher-Yates of one subject: for i = 0..L-1, j = i + int(n - i),
  ;; swap r[i] and r[j]. The first L entries are then a uniform L-subset of the n. The draws do not
  ;; depend on the array, so they are made 64 at a time into the buffer at byte 5120 (j - i, as
  ;; byte offsets), then the 64 swaps: a loop of loads and stores alone lets the processor have many
  ;; of the random r[j] in flight at once, which matters when the arrays outgrow the cache.
  (func $shuffle (param $r i32) (param $n i32) (param $L i32)
    (local $at i32) (local $i i32) (local $c i32) (local $d i32) (local $m i32) (local $x i32) (local $p i64) (local $a i32) (local $b i32) (local $t i32)
    (local.set $at (global.get $at))
    (block $done
      (loop $chunk
        (br_if $done (i32.ge_u (local.get $i) (local.get $L)))
        ;; c = min(64, L - i) draws into the buffer
        (local.set $c (select (i32.const 256) (i32.shl (i32.sub (local.get $L) (local.get $i)) (i32.const 2)) (i32.ge_u (i32.sub (local.get $L) (local.get $i)) (i32.const 64))))
        (local.set $m (i32.sub (local.get $n) (local.get $i)))
        (local.set $d (i32.const 0))
        (loop $next
          (block $ok
            (loop $draw
              (if (i32.eq (local.get $at) (i32.const 2496))
                (then (call $twist) (local.set $at (i32.const 0))))
              (local.set $x (i32.load offset=2496 (local.get $at)))
              (local.set $at (i32.add (local.get $at) (i32.const 4)))
              (local.set $p (i64.mul (i64.extend_i32_u (local.get $x)) (i64.extend_i32_u (local.get $m))))
              (br_if $ok (i32.ge_u (i32.wrap_i64 (local.get $p)) (local.get $m)))
              (br_if $ok (i32.ge_u (i32.wrap_i64 (local.get $p)) (i32.rem_u (i32.sub (i32.const 0) (local.get $m)) (local.get $m))))
              (br $draw)))
          (i32.store offset=5120 (local.get $d) (i32.shl (i32.wrap_i64 (i64.shr_u (local.get $p) (i64.const 32))) (i32.const 2)))
          (local.set $m (i32.sub (local.get $m) (i32.const 1)))
          (local.set $d (i32.add (local.get $d) (i32.const 4)))
          (br_if $next (i32.lt_u (local.get $d) (local.get $c))))
        ;; the swaps
        (local.set $a (i32.add (local.get $r) (i32.shl (local.get $i) (i32.const 2))))
        (local.set $d (i32.const 0))
        (loop $swap
          (local.set $b (i32.add (local.get $a) (i32.load offset=5120 (local.get $d))))
          (local.set $t (i32.load (local.get $a)))
          (i32.store (local.get $a) (i32.load (local.get $b)))
          (i32.store (local.get $b) (local.get $t))
          (local.set $a (i32.add (local.get $a) (i32.const 4)))
          (local.set $d (i32.add (local.get $d) (i32.const 4)))
          (br_if $swap (i32.lt_u (local.get $d) (local.get $c))))
        (local.set $i (i32.add (local.get $i) (i32.const 64)))
        (br $chunk)))
    (global.set $at (local.get $at)))

  ;; $count8(subj, S, k, count): `on` of one permutation over byte counts (S < 256); `all` to bytes
  ;; 4992..4995. First pass: count each subject's first L states, noting a count that reaches S;
  ;; second pass: each error reads its state's count c, adds c when c >= k, and clears it, so the
  ;; first error met of a state adds c and its others read 0, which adds nothing (k >= 1): the sum
  ;; of JavaScript's `shareOnShared`, without a branch the processor would mispredict (whether a
  ;; state was met before, whether c >= k), which cost more than the rest of the pass.
  (func $count8 (param $subj i32) (param $S i32) (param $k i32) (param $count i32) (result i32)
    (local $e i32) (local $end i32) (local $p i32) (local $a i32) (local $c i32) (local $v i32) (local $on i32) (local $all i32)
    (local.set $e (local.get $subj))
    (local.set $end (i32.add (local.get $subj) (i32.mul (local.get $S) (i32.const 12))))
    (loop $s1
      (local.set $p (i32.load (local.get $e)))
      (local.set $a (i32.add (local.get $p) (i32.shl (i32.load offset=8 (local.get $e)) (i32.const 2))))
      (block $d1
        (loop $i1
          (br_if $d1 (i32.ge_u (local.get $p) (local.get $a)))
          (local.set $c (i32.add (local.get $count) (i32.load (local.get $p))))
          (i32.store8 (local.get $c) (local.tee $c (i32.add (i32.load8_u (local.get $c)) (i32.const 1))))
          (local.set $all (i32.add (local.get $all) (i32.eq (local.get $c) (local.get $S))))
          (local.set $p (i32.add (local.get $p) (i32.const 4)))
          (br $i1)))
      (local.set $e (i32.add (local.get $e) (i32.const 12)))
      (br_if $s1 (i32.lt_u (local.get $e) (local.get $end))))
    (local.set $e (local.get $subj))
    (loop $s2
      (local.set $p (i32.load (local.get $e)))
      (local.set $a (i32.add (local.get $p) (i32.shl (i32.load offset=8 (local.get $e)) (i32.const 2))))
      (block $d2
        (loop $i2
          (br_if $d2 (i32.ge_u (local.get $p) (local.get $a)))
          (local.set $c (i32.add (local.get $count) (i32.load (local.get $p))))
          (local.set $v (i32.load8_u (local.get $c)))
          (local.set $on (i32.add (local.get $on) (select (local.get $v) (i32.const 0) (i32.ge_u (local.get $v) (local.get $k)))))
          (i32.store8 (local.get $c) (i32.const 0))
          (local.set $p (i32.add (local.get $p) (i32.const 4)))
          (br $i2)))
      (local.set $e (i32.add (local.get $e) (i32.const 12)))
      (br_if $s2 (i32.lt_u (local.get $e) (local.get $end))))
    (i32.store (i32.const 4992) (local.get $all))
    (local.get $on))

  ;; $count32: $count8 over Int32 counts (any number of subjects).
  (func $count32 (param $subj i32) (param $S i32) (param $k i32) (param $count i32) (result i32)
    (local $e i32) (local $end i32) (local $p i32) (local $a i32) (local $c i32) (local $v i32) (local $on i32) (local $all i32)
    (local.set $e (local.get $subj))
    (local.set $end (i32.add (local.get $subj) (i32.mul (local.get $S) (i32.const 12))))
    (loop $s1
      (local.set $p (i32.load (local.get $e)))
      (local.set $a (i32.add (local.get $p) (i32.shl (i32.load offset=8 (local.get $e)) (i32.const 2))))
      (block $d1
        (loop $i1
          (br_if $d1 (i32.ge_u (local.get $p) (local.get $a)))
          (local.set $c (i32.add (local.get $count) (i32.shl (i32.load (local.get $p)) (i32.const 2))))
          (i32.store (local.get $c) (local.tee $v (i32.add (i32.load (local.get $c)) (i32.const 1))))
          (local.set $all (i32.add (local.get $all) (i32.eq (local.get $v) (local.get $S))))
          (local.set $p (i32.add (local.get $p) (i32.const 4)))
          (br $i1)))
      (local.set $e (i32.add (local.get $e) (i32.const 12)))
      (br_if $s1 (i32.lt_u (local.get $e) (local.get $end))))
    (local.set $e (local.get $subj))
    (loop $s2
      (local.set $p (i32.load (local.get $e)))
      (local.set $a (i32.add (local.get $p) (i32.shl (i32.load offset=8 (local.get $e)) (i32.const 2))))
      (block $d2
        (loop $i2
          (br_if $d2 (i32.ge_u (local.get $p) (local.get $a)))
          (local.set $c (i32.add (local.get $count) (i32.shl (i32.load (local.get $p)) (i32.const 2))))
          (local.set $v (i32.load (local.get $c)))
          (local.set $on (i32.add (local.get $on) (select (local.get $v) (i32.const 0) (i32.ge_u (local.get $v) (local.get $k)))))
          (i32.store (local.get $c) (i32.const 0))
          (local.set $p (i32.add (local.get $p) (i32.const 4)))
          (br $i2)))
      (local.set $e (i32.add (local.get $e) (i32.const 12)))
      (br_if $s2 (i32.lt_u (local.get $e) (local.get $end))))
    (i32.store (i32.const 4992) (local.get $all))
    (local.get $on))

  ;; run(subj, S, k, B, wide, count, out): B permutations; permutation b writes on to out + 8 b and
  ;; all to out + 8 b + 4.
  (func (export "run") (param $subj i32) (param $S i32) (param $k i32) (param $B i32) (param $wide i32) (param $count i32) (param $out i32)
    (local $b i32) (local $e i32) (local $end i32)
    (local.set $end (i32.add (local.get $subj) (i32.mul (local.get $S) (i32.const 12))))
    (block $done
      (loop $perm
        (br_if $done (i32.ge_u (local.get $b) (local.get $B)))
        (local.set $e (local.get $subj))
        (loop $s
          (call $shuffle (i32.load (local.get $e)) (i32.load offset=4 (local.get $e)) (i32.load offset=8 (local.get $e)))
          (local.set $e (i32.add (local.get $e) (i32.const 12)))
          (br_if $s (i32.lt_u (local.get $e) (local.get $end))))
        (i32.store (local.get $out)
          (if (result i32) (local.get $wide)
            (then (call $count32 (local.get $subj) (local.get $S) (local.get $k) (local.get $count)))
            (else (call $count8 (local.get $subj) (local.get $S) (local.get $k) (local.get $count)))))
        (i32.store offset=4 (local.get $out) (i32.load (i32.const 4992)))
        (local.set $out (i32.add (local.get $out) (i32.const 8)))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (br $perm))))
)
