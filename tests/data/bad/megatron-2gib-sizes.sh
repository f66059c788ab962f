# Megatron-LM arguments for the Meshwork layout 'tiny-cpu'.
# tiny on 4 GPUs (1 x 4): tp 2, pp 2, dp 1, cp 1, ep 1; 4 micro-batches per step.
# Add the rendezvous (--rdzv-backend c10d --rdzv-endpoint HOST:PORT), data,
# tokenizer, optimizer and checkpoint flags, or use: meshwork-cli export --format slurm
torchrun --nnodes 1 --nproc-per-node 4 pretrain_gpt.py \
    --num-layers 4 \
    --hidden-size 2147483648 \
    --ffn-hidden-size 128 \
    --num-attention-heads 4 \
    --group-query-attention \
    --num-query-groups 2 \
    --max-position-embeddings 128 \
    --vocab-size 256 \
    --normalization RMSNorm \
    --swiglu \
    --position-embedding-type rope \
    --untie-embeddings-and-output-weights \
    --disable-bias-linear \
    --tensor-model-parallel-size 2 \
    --pipeline-model-parallel-size 2 \
    --micro-batch-size 2 \
    --global-batch-size 8 \
    --seq-length 2147483648 \
    --attention-backend unfused
