;; meta: -kind processor -name ban -version 1.0.0 -description "sets the logit of the token whose piece is config \"ban\" to -inf"
;; At init it scans the vocabulary through realizar.vocab_piece; each step it
;; writes one edit (id, -inf) to its output region, which follows the
;; n_vocab × f32 input region. Memory: 0 banned id (-1 none), 4 blen,
;; 16 "ban", 128 ban bytes (32), 256 piece scratch (64).
(module
  (import "realizar" "config_get" (func $config_get (param i32 i32 i32 i32) (result i32)))
  (import "realizar" "vocab_piece" (func $vocab_piece (param i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "ban")
  (global $buf (mut i32) (i32.const 0))
  (global $n (mut i32) (i32.const 0))
  (func (export "realizar_abi_v1_processor"))
  (func $same (param $len i32) (result i32)
    (local $i i32)
    (block $no (loop $next
      (br_if $no (i32.ge_u (local.get $i) (local.get $len)))
      (if (i32.ne (i32.load8_u (i32.add (i32.const 256) (local.get $i))) (i32.load8_u (i32.add (i32.const 128) (local.get $i))))
        (then (return (i32.const 0))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (i32.const 1))
  (func (export "realizar_init") (param $n i32) (param $maxp i32) (param i32 i32) (result i64)
    (local $id i32) (local $blen i32) (local $old i32)
    (global.set $n (local.get $n))
    (i32.store (i32.const 0) (i32.const -1))
    (local.set $blen (call $config_get (i32.const 16) (i32.const 3) (i32.const 128) (i32.const 32)))
    (if (i32.gt_s (local.get $blen) (i32.const 32)) (then (return (i64.const -2))))
    (if (i32.gt_s (local.get $blen) (i32.const 0))
      (then (block $found (loop $scan
        (br_if $found (i32.ge_u (local.get $id) (local.get $n)))
        (if (i32.eq (call $vocab_piece (local.get $id) (i32.const 256) (i32.const 64)) (local.get $blen))
          (then (if (call $same (local.get $blen))
            (then (i32.store (i32.const 0) (local.get $id)) (br $found)))))
        (local.set $id (i32.add (local.get $id) (i32.const 1)))
        (br $scan)))))
    ;; input n*4 bytes, output n*8 bytes
    (local.set $old (memory.grow
      (i32.div_u (i32.add (i32.mul (local.get $n) (i32.const 12)) (i32.const 65535)) (i32.const 65536))))
    (if (i32.lt_s (local.get $old) (i32.const 0)) (then (return (i64.const -1))))
    (global.set $buf (i32.mul (local.get $old) (i32.const 65536)))
    (i64.extend_i32_u (global.get $buf)))
  (func (export "realizar_reset") (param i64 i32) (result i32) (i32.const 0))
  (func (export "realizar_process") (param $prev i32) (param $count i32) (result i32)
    (local $out i32)
    (if (i32.lt_s (i32.load (i32.const 0)) (i32.const 0)) (then (return (i32.const 0))))
    (local.set $out (i32.add (global.get $buf) (i32.shl (global.get $n) (i32.const 2))))
    (i32.store (local.get $out) (i32.load (i32.const 0)))
    (f32.store (i32.add (local.get $out) (i32.const 4)) (f32.const -inf))
    (i32.const 1))
)
