;; meta: -kind sampler -name top1 -version 1.0.0 -description "asks for the top-40 candidates and takes the first"
;; A good sampler in top-N mode: the host selects and sorts the candidates,
;; so the answer is ids[0]. The region is 40 × i32 ids then 40 × f32 logits
;; at address 1024.
(module
  (memory (export "memory") 1)
  (func (export "realizar_abi_v1_sampler"))
  (func (export "realizar_init") (param i32 i32 i32 i32) (result i64)
    ;; PackInit(1024, 40)
    (i64.or (i64.const 1024) (i64.shl (i64.const 40) (i64.const 32))))
  (func (export "realizar_reset") (param i64 i32) (result i32) (i32.const 0))
  (func (export "realizar_sample") (param $prev i32) (param $count i32) (result i32)
    (if (i32.eqz (local.get $count)) (then (return (i32.const -1))))
    (i32.load (i32.const 1024)))
)
