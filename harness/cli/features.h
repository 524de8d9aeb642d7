/*
 * features.h — kernel feature probes of `probecheck features` that live
 * outside cmd_features.c.
 */
#ifndef PC_FEATURES_H
#define PC_FEATURES_H

/* uretprobe_syscall, uprobe_syscall, uprobe_optimize as KEY=0|1 lines
 * (KEY_why= after a 0) on stdout. */
void features_x86(void);

#endif
