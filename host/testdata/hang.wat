;; meta: -kind processor -name hang -version 1.0.0 -description "never returns from a step"
;; For the whole-step deadline: its step loops forever with no host call,
;; so only a deadline ends it (the interpreter's and the compiler's
;; context checks). A test that loads it with a per-call deadline far
;; beyond the step's proves that the step's deadline stopped the call
;; without timing anything.
(module
  (memory (export "memory") 1)
  (func (export "realizar_abi_v1_processor"))
  (func (export "realizar_init") (param $n i32) (param $maxp i32) (param i32 i32) (result i64)
    (local $old i32)
    ;; input n*4 bytes, output n*8 bytes
    (local.set $old (memory.grow
      (i32.div_u (i32.add (i32.mul (local.get $n) (i32.const 12)) (i32.const 65535)) (i32.const 65536))))
    (if (i32.lt_s (local.get $old) (i32.const 0)) (then (return (i64.const -1))))
    (i64.extend_i32_u (i32.mul (local.get $old) (i32.const 65536))))
  (func (export "realizar_reset") (param i64 i32) (result i32) (i32.const 0))
  (func (export "realizar_process") (param $prev i32) (param $count i32) (result i32)
    (loop $forever (br $forever))
    (i32.const 0))
)
