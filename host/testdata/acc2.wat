;; meta: -abi 2 -kind sampler -name acc2 -version 1.0.0 -description "ABI 2 sampler: answers n_accepted*100 + the sum of the accepted tokens"
;; Checks the v2 step arguments: realizar_sample(n_accepted, count) with
;; count = n_vocab (full logits), and realizar.accepted_get during the call.
;; The answer encodes both, so a test reads them from the token id.
(module
  (import "realizar" "accepted_get" (func $accepted_get (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "realizar_abi_v2_sampler"))
  (func (export "realizar_init") (param $n i32) (param i32 i32 i32) (param i64) (result i64)
    (local $old i32)
    (local.set $old (memory.grow
      (i32.div_u (i32.add (i32.mul (local.get $n) (i32.const 4)) (i32.const 65535)) (i32.const 65536))))
    (if (i32.lt_s (local.get $old) (i32.const 0)) (then (return (i64.const -1))))
    (i64.extend_i32_u (i32.mul (local.get $old) (i32.const 65536))))
  (func (export "realizar_reset") (param i64 i32) (result i32) (i32.const 0))
  (func (export "realizar_sample") (param $nacc i32) (param $count i32) (result i32)
    (local $got i32) (local $k i32) (local $sum i32)
    (local.set $got (call $accepted_get (i32.const 0) (i32.const 256)))
    (if (i32.ne (local.get $got) (local.get $nacc)) (then (return (i32.const -1))))
    (block $done (loop $add
      (br_if $done (i32.ge_u (local.get $k) (local.get $got)))
      (local.set $sum (i32.add (local.get $sum) (i32.load (i32.shl (local.get $k) (i32.const 2)))))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br $add)))
    (i32.add (i32.mul (local.get $nacc) (i32.const 100)) (local.get $sum)))
)
