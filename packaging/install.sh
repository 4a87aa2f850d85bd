#!/bin/sh
# Put MAMA in your desktop's menu: a desktop entry and the icon in your XDG data
# folder, both pointing at this folder, and a `mama` command in ~/.local/bin (for the
# terminal and the Claude Code plugin). Nothing outside your home folder is touched.
# Run it again after moving this folder. ./uninstall.sh takes it all out again.
set -eu

here=$(cd "$(dirname "$0")" && pwd -P)
program="$here/mama"
[ -x "$program" ] || { echo "install.sh: $program is missing; unpack the whole archive" >&2; exit 1; }

data="${XDG_DATA_HOME:-$HOME/.local/share}"
config="${XDG_CONFIG_HOME:-$HOME/.config}"
apps="$data/applications"
icons="$data/icons/hicolor/scalable/apps"
bin="$HOME/.local/bin"

# One Exec argument, quoted as the desktop entry specification asks: inside double
# quotes, \ " ` $ take a backslash; then every backslash is doubled (the value is a
# string with escapes) and % is doubled (field codes).
exec_arg() {
    printf '%s' "$1" | sed -e 's/[\\"`$]/\\&/g' -e 's/\\/\\\\/g' -e 's/%/%%/g' -e 's/^/"/' -e 's/$/"/'
}
EXEC_LINE=$(exec_arg "$program")
export EXEC_LINE

# Rewrite the Exec line of a desktop entry: $1 template, $2 target.
write_entry() {
    tmp="$2.tmp.$$"
    awk '/^Exec=/ { print "Exec=" ENVIRON["EXEC_LINE"]; next } { print }' "$1" > "$tmp"
    mv -f "$tmp" "$2"
}

mkdir -p "$apps" "$icons" "$bin"
cp -f "$here/_internal/resources/icons/mama.svg" "$icons/mama.svg"
write_entry "$here/_internal/desktop/mama.desktop" "$apps/mama.desktop"
echo "menu entry: $apps/mama.desktop"

# The command for terminals and the Claude Code plugin; never replace a foreign one.
if [ -L "$bin/mama" ] || [ ! -e "$bin/mama" ]; then
    ln -sfn "$program" "$bin/mama"
    echo "command: $bin/mama -> $program"
else
    echo "install.sh: $bin/mama exists and is not a link; left as it is" >&2
fi

# Start at login (set in MAMA's Settings) follows the bundle to where it is now.
autostart="$config/autostart/mama.desktop"
if [ -f "$autostart" ]; then
    write_entry "$autostart" "$autostart"
    echo "start at login: $autostart now starts $program"
fi

command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$apps" || true
command -v gtk-update-icon-cache >/dev/null 2>&1 \
    && gtk-update-icon-cache -q -t "$data/icons/hicolor" 2>/dev/null || true

# What the first start will do, or that an earlier install's memory is kept.
chosen="$config/mama/data-folder"
home="${MAMA_HOME:-$data/mama}"
[ -s "$chosen" ] && home=$(cat "$chosen")
if [ -e "$home/mama.db" ]; then
    echo "MAMA is in your applications menu; your memory in $home stays as it was."
else
    echo "MAMA is in your applications menu; its first start creates your encrypted memory."
fi

# A command a shell cannot find is no command: say how to make it findable.
case ":${PATH:-}:" in
    *":$bin:"*) ;;
    *)
        echo "install.sh: $bin is not on your PATH, so a terminal does not find 'mama'." >&2
        echo "  Add it: echo 'export PATH=\"\$HOME/.local/bin:\$PATH\"' >> ~/.profile" \
            "(then log in again), or run $program" >&2
        ;;
esac
