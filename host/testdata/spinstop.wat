;; meta: -kind stop -name spinstop -version 1.0.0 -description "continues after spinning 150 ms of realizar.clock_ns per check"
;; For the whole-step deadline: each check spins until realizar.clock_ns has
;; advanced 150 ms, then answers Continue. Input region at 1024 (max_piece
;; must fit).
(module
  (import "realizar" "clock_ns" (func $clock_ns (result i64)))
  (memory (export "memory") 1)
  (func (export "realizar_abi_v1_stop"))
  (func (export "realizar_init") (param $n i32) (param $maxp i32) (param i32 i32) (result i64)
    (if (i32.gt_u (local.get $maxp) (i32.const 60000)) (then (return (i64.const -3))))
    (i64.const 1024))
  (func (export "realizar_reset") (param i64 i32) (result i32) (i32.const 0))
  (func (export "realizar_check") (param $tok i32) (param $len i32) (result i32)
    (local $end i64)
    (local.set $end (i64.add (call $clock_ns) (i64.const 150000000)))
    (block $done (loop $spin
      (br_if $done (i64.ge_u (call $clock_ns) (local.get $end)))
      (br $spin)))
    (i32.const 0))
)
