/* Placeholder screen: the dashboard proper arrives with its own issue. */
#include "tui.h"

#include <curses.h>
#include <locale.h>

int tui_run(const struct tui_options *opts) {
  (void)opts;
  setlocale(LC_ALL, "");
  initscr();
  cbreak();
  noecho();
  keypad(stdscr, TRUE);
  curs_set(0);
  for (;;) {
    erase();
    mvprintw(0, 0, "servetop " SERVETOP_VERSION);
    mvprintw(2, 2, "The dashboard is not built yet. Try: servetop recipes, servetop lint.");
    mvprintw(4, 2, "q: quit");
    refresh();
    int ch = getch();
    if (ch == 'q' || ch == 'Q' || ch == ERR)
      break;
  }
  endwin();
  return 0;
}
