;; meta: -kind stop -name spinwork -version 1.0.0 -description "continues after a fixed 1,000,000 loop iterations of work per check"
;; For the deadline's clock: each check does a fixed amount of work (CPU
;; time, whatever the wall clock does meanwhile), then answers Continue.
;; Input region at 1024 (max_piece must fit).
(module
  (memory (export "memory") 1)
  (func (export "realizar_abi_v1_stop"))
  (func (export "realizar_init") (param $n i32) (param $maxp i32) (param i32 i32) (result i64)
    (if (i32.gt_u (local.get $maxp) (i32.const 60000)) (then (return (i64.const -3))))
    (i64.const 1024))
  (func (export "realizar_reset") (param i64 i32) (result i32) (i32.const 0))
  (func (export "realizar_check") (param $tok i32) (param $len i32) (result i32)
    (local $i i32)
    (local.set $i (i32.const 1000000))
    (loop $spin
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (br_if $spin (i32.ne (local.get $i) (i32.const 0))))
    (i32.const 0))
)
