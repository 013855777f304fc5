;; meta: -kind sampler -name latetrap -version 1.0.0 -description "argmax for 4 steps of a turn, then traps"
;; For the server's mid-stream failure test: the turn streams text first,
;; then the plugin traps (unreachable) at its fifth sample.
(module
  (memory (export "memory") 1)
  (global $buf (mut i32) (i32.const 0))
  (global $steps (mut i32) (i32.const 0))
  (func (export "realizar_abi_v1_sampler"))
  (func (export "realizar_init") (param $n i32) (param $maxp i32) (param $cp i32) (param $cl i32) (result i64)
    (local $old i32)
    (local.set $old (memory.grow
      (i32.div_u (i32.add (i32.mul (local.get $n) (i32.const 4)) (i32.const 65535)) (i32.const 65536))))
    (if (i32.lt_s (local.get $old) (i32.const 0)) (then (return (i64.const -1))))
    (global.set $buf (i32.mul (local.get $old) (i32.const 65536)))
    (i64.extend_i32_u (global.get $buf)))
  (func (export "realizar_reset") (param i64 i32) (result i32)
    (global.set $steps (i32.const 0))
    (i32.const 0))
  (func (export "realizar_sample") (param $prev i32) (param $count i32) (result i32)
    (local $i i32) (local $best i32) (local $bv f32) (local $v f32)
    (global.set $steps (i32.add (global.get $steps) (i32.const 1)))
    (if (i32.gt_u (global.get $steps) (i32.const 4)) (then unreachable))
    (local.set $bv (f32.load (global.get $buf)))
    (local.set $i (i32.const 1))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
      (local.set $v (f32.load (i32.add (global.get $buf) (i32.shl (local.get $i) (i32.const 2)))))
      (if (f32.gt (local.get $v) (local.get $bv))
        (then (local.set $bv (local.get $v)) (local.set $best (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (local.get $best))
)
