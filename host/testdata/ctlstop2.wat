;; meta: -abi 2 -kind stop -name ctlstop2 -version 1.0.0 -description "ABI 2 stop policy: stops (keeping the token) at a control token, found through token_attrs"
;; At init it reads every token's attribute word with one realizar.token_attrs
;; call (no list of special tokens in its config); realizar_check answers
;; stop-keep for a token with the control flag, continue otherwise.
;; Memory: 0 the input region (max_piece bytes, at most 64 KiB); 65536 the
;; attribute words.
(module
  (import "realizar" "token_attrs" (func $token_attrs (param i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (global $n (mut i32) (i32.const 0))
  (func (export "realizar_abi_v2_stop"))
  (func (export "realizar_init") (param $n i32) (param $maxp i32) (param i32 i32) (param i64) (result i64)
    (if (i32.gt_u (local.get $maxp) (i32.const 65536)) (then (return (i64.const -3))))
    (if (i32.lt_s (memory.grow (i32.shr_u (i32.add (i32.shl (local.get $n) (i32.const 2)) (i32.const 65535)) (i32.const 16)))
        (i32.const 0))
      (then (return (i64.const -1))))
    (global.set $n (local.get $n))
    (if (i32.ne (call $token_attrs (i32.const 0) (i32.const 65536) (local.get $n)) (local.get $n))
      (then (return (i64.const -3))))
    (i64.const 0))
  (func (export "realizar_reset") (param i64 i32) (result i32) (i32.const 0))
  (func (export "realizar_check") (param $token i32) (param $len i32) (result i32)
    (if (i32.ge_u (local.get $token) (global.get $n)) (then (return (i32.const -4))))
    (if (i32.and (i32.load (i32.add (i32.const 65536) (i32.shl (local.get $token) (i32.const 2)))) (i32.const 2))
      (then (return (i32.const 1))))
    (i32.const 0))
)
