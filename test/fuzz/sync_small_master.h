/* The small master fuzz_sync holds and seeds_sync answers from: the seeds apply to the
 * target's copy only if both build the same journal, so both take it from here. */
#ifndef IBSMD_TEST_FUZZ_SYNC_SMALL_MASTER_H
#define IBSMD_TEST_FUZZ_SYNC_SMALL_MASTER_H

#define SMALL_MASTER_EPOCH 0x1b5dull

static const char small_master_gen1[] =
    "lid 0x0000000000100001 0x0001\nlid 0x0000000000100003 0x0002\n"
    "mkey 0x0000000000100001 0x00000000deadbeef\n"
    "hop 0x0000000000200000 1 0x0000000000100001\nservice 0100 fe80 kept\n";
static const char small_master_gen2[] =
    "lid 0x0000000000100001 0x0001\nlid 0x0000000000100005 0x0003\n"
    "mkey 0x0000000000100001 0x00000000feedf00d\nservice 0100 fe80 kept\ngroup 0 ff12\n";

#endif
