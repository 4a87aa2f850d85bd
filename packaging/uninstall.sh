#!/bin/sh
# Take MAMA out of your desktop: the menu entry, the icon, the ~/.local/bin/mama
# link and the start-at-login entry that install.sh or MAMA wrote. Your memory (the
# encrypted store, its backups, settings and logs) stays, unless you add
# --remove-data: then the default data and cache folders are deleted too (a data
# folder you chose elsewhere in Settings, and the key in your keyring, stay).
set -eu

remove_data=no
case "${1:-}" in
    --remove-data) remove_data=yes ;;
    "") ;;
    *) echo "usage: uninstall.sh [--remove-data]" >&2; exit 2 ;;
esac

here=$(cd "$(dirname "$0")" && pwd -P)
data="${XDG_DATA_HOME:-$HOME/.local/share}"
config="${XDG_CONFIG_HOME:-$HOME/.config}"
cache="${XDG_CACHE_HOME:-$HOME/.cache}"

rm -f "$data/applications/mama.desktop" "$data/icons/hicolor/scalable/apps/mama.svg"
if [ -L "$HOME/.local/bin/mama" ]; then
    rm -f "$HOME/.local/bin/mama"
fi
rm -f "$config/autostart/mama.desktop"
command -v update-desktop-database >/dev/null 2>&1 \
    && update-desktop-database -q "$data/applications" || true
# install.sh's gtk-update-icon-cache left a cache of the icon folder: made again for
# the icons that stay, or gone with the folders MAMA's icon alone was in.
hicolor="$data/icons/hicolor"
if [ -d "$hicolor" ]; then
    if find "$hicolor" -type f ! -name icon-theme.cache | grep -q .; then
        command -v gtk-update-icon-cache >/dev/null 2>&1 \
            && gtk-update-icon-cache -q -t "$hicolor" 2>/dev/null || true
    else
        rm -f "$hicolor/icon-theme.cache"
        find "$hicolor" -depth -type d -empty -exec rmdir {} \; 2>/dev/null || true
    fi
fi
echo "MAMA is out of your menu and no longer starts at login."

if [ "$remove_data" = yes ]; then
    printf 'Delete your MAMA memory in %s and %s for good? Type yes: ' "$data/mama" "$cache/mama"
    read -r answer
    if [ "$answer" = yes ]; then
        rm -rf "$data/mama" "$cache/mama"
        echo "deleted $data/mama and $cache/mama"
    else
        echo "kept your data"
    fi
else
    echo "your data stays in $data/mama (./uninstall.sh --remove-data deletes it)"
fi
echo "to remove the program itself, delete $here"
