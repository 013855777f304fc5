;; meta: -kind stop -name clock -version 1.0.0 -description "stops once realizar.clock_ns reaches 1000; misbehaves on tokens 998 and 999"
;; Continue until clock_ns() >= 1000, then StopKeep. Token 998 answers the
;; invalid action 3; token 999 traps. Input region at 1024 (max_piece must fit).
(module
  (import "realizar" "clock_ns" (func $clock_ns (result i64)))
  (memory (export "memory") 1)
  (func (export "realizar_abi_v1_stop"))
  (func (export "realizar_init") (param $n i32) (param $maxp i32) (param i32 i32) (result i64)
    (if (i32.gt_u (local.get $maxp) (i32.const 60000)) (then (return (i64.const -3))))
    (i64.const 1024))
  (func (export "realizar_reset") (param i64 i32) (result i32) (i32.const 0))
  (func (export "realizar_check") (param $tok i32) (param $len i32) (result i32)
    (if (i32.eq (local.get $tok) (i32.const 999)) (then unreachable))
    (if (i32.eq (local.get $tok) (i32.const 998)) (then (return (i32.const 3))))
    (if (i64.ge_u (call $clock_ns) (i64.const 1000)) (then (return (i32.const 1))))
    (i32.const 0))
)
