;; meta: -kind stop -name hangstop -version 1.0.0 -description "never returns from a check"
;; For the whole-step deadline: each check loops forever with no host call,
;; so only a deadline ends it. Input region at 1024 (max_piece must fit).
(module
  (memory (export "memory") 1)
  (func (export "realizar_abi_v1_stop"))
  (func (export "realizar_init") (param $n i32) (param $maxp i32) (param i32 i32) (result i64)
    (if (i32.gt_u (local.get $maxp) (i32.const 60000)) (then (return (i64.const -3))))
    (i64.const 1024))
  (func (export "realizar_reset") (param i64 i32) (result i32) (i32.const 0))
  (func (export "realizar_check") (param $tok i32) (param $len i32) (result i32)
    (loop $forever (br $forever))
    (i32.const 0))
)
