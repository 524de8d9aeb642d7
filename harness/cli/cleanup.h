/*
 * cleanup.h — `probecheck cleanup` and the same cleanup at every start.
 */
#ifndef PC_CLEANUP_H
#define PC_CLEANUP_H

/* Undo what dead tracers left (providers/stash.h); an exit code. */
int  cmd_cleanup(int argc, char **argv);
/*
 * The same, run by main before any command: silent unless something was
 * removed (one stderr line each) or the stash needs a look (one line).
 */
void cleanup_at_start(void);

#endif
