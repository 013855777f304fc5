;; meta: -abi 2 -kind processor -name badinit2 -version 1.0.0 -description "ABI 2 processor: the mask mode with an input address (a bad result)"
(module
  (memory (export "memory") 1)
  (func (export "realizar_abi_v2_processor"))
  ;; PackInitV2(1024, 0, OutputMask) = 1<<45 | 1024
  (func (export "realizar_init") (param i32 i32 i32 i32 i64) (result i64) (i64.const 35184372089856))
  (func (export "realizar_reset") (param i64 i32) (result i32) (i32.const 0))
  (func (export "realizar_process") (param i32 i32) (result i32) (i32.const 0))
)
