#!/usr/bin/env bash
# Records what each tool does on disk when it saves, as an ordinary user (nobody) in a plain local directory, and
# writes the normalised sequence of operations to <tool>-<case>.txt beside this script (README.md says how to read
# them). Run as root: Tests/Fixtures/editor-saves/record.sh [NAME-PATTERN]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
only=${1:-}
# Not under /tmp: vim makes no backup of a file there (its default backupskip=/tmp/*,...), so its saves differ.
work=$(mktemp -d /var/tmp/editor-saves.XXXXXX)
shm=$(mktemp -d /dev/shm/editor-saves.XXXXXX) # another filesystem, for mv across filesystems
trap 'rm -rf "$work" "$shm"' EXIT
chmod 755 "$work" "$shm"
cp "$here/keys.py" "$work/keys.py"
trace=%file,write,writev,pwrite64,pwritev,close,ftruncate,fsync,fdatasync,copy_file_range,sendfile,splice,fchmod,fchown,fsetxattr,ioctl,fchdir

# record NAME SETUP COMMAND: SETUP (run in the directory first, by root, untraced) puts existing files there;
# COMMAND runs traced as nobody in the directory DIR, with $SRC a directory outside DIR holding notes.txt and
# $KEYS the pseudo-terminal typist (keys.py).
record() {
    local name=$1 setup=$2 command=$3
    [[ -z $only || $name == $only ]] || return 0
    local case=$work/$name
    mkdir -p "$case/dir" "$case/src" "$case/home"
    printf 'Notes of the seminar, first draft.\nSecond line.\n' >"$case/src/notes.txt"
    (cd "$case/dir" && eval "$setup")
    chown -R 65534:65534 "$case" "$shm"
    local status=0
    timeout 120 strace -f -y -s 64 -e trace="$trace" -o "$case/strace.log" \
        setpriv --reuid=65534 --regid=65534 --clear-groups \
        env -i HOME="$case/home" PATH=/usr/bin:/bin LANG=C.UTF-8 SRC="$case/src" SHM="$shm" KEYS="$work/keys.py" \
        sh -c "cd '$case/dir' && $command" >"$case/output" 2>&1 </dev/null || status=$?
    {
        echo "# $name"
        echo "# before: ${setup:-(empty directory)}"
        echo "# command: $command"
        [[ $status == 0 ]] || echo "# exit status: $status"
        python3 "$here/normalize.py" "$case/dir" <"$case/strace.log"
        echo "# after: $(cd "$case/dir" && find . -mindepth 1 -printf '%P (%s bytes) ' | sort)"
    } >"$here/$name.txt"
    echo "$name: $status"
}

existing="printf 'old notes\n' >notes.txt"

record cp-new "" 'cp "$SRC/notes.txt" .'
record cp-overwrite "$existing" 'cp "$SRC/notes.txt" .'
record cp-backup-overwrite "$existing" 'cp --backup "$SRC/notes.txt" .'
record cp-a-new "" 'cp -a "$SRC/notes.txt" .'
record mv-rename-over "$existing; printf 'draft\n' >draft.txt" 'mv draft.txt notes.txt'
record mv-new-from-other-filesystem "" 'cp "$SRC/notes.txt" "$SHM/notes.txt" && mv "$SHM/notes.txt" .'
record rsync-new "" 'rsync "$SRC/notes.txt" .'
record rsync-overwrite "$existing" 'rsync "$SRC/notes.txt" .'
record sed-i "$existing" "sed -i 's/old/new/' notes.txt"
record tee-overwrite "$existing" 'echo new | tee notes.txt'
record tee-append "$existing" 'echo more | tee -a notes.txt'
record shell-redirect-overwrite "$existing" 'echo new >notes.txt'
record shell-redirect-append "$existing" 'echo more >>notes.txt'
record touch-new "" 'touch notes.txt'
record python3-write-new "" "python3 -c 'open(\"notes.txt\", \"w\").write(\"new\\n\")'"
record python3-write-overwrite "$existing" "python3 -c 'open(\"notes.txt\", \"w\").write(\"new\\n\")'"
record gio-copy-new "" 'gio copy "$SRC/notes.txt" .'
record gio-copy-overwrite "$existing" 'gio copy "$SRC/notes.txt" notes.txt'
record gio-copy-backup-overwrite "$existing" 'gio copy --backup "$SRC/notes.txt" notes.txt'
record gio-save-new "" 'echo new | gio save notes.txt'
record gio-save-overwrite "$existing" 'echo new | gio save notes.txt'
record gio-save-backup-overwrite "$existing" 'echo new | gio save --backup notes.txt'
record vim-default-w-existing "$existing" '$KEYS "Aadded by vim\\e|:w\\r|:q\\r" vim notes.txt'
record vim-default-wq-new "" '$KEYS "ihello from vim\\e|:wq\\r" vim new.txt'
record vim-backupcopy-yes-w-existing "$existing" '$KEYS "Aadded by vim\\e|:w\\r|:q\\r" vim -c "set backupcopy=yes" notes.txt'
record vim-backupcopy-no-w-existing "$existing" '$KEYS "Aadded by vim\\e|:w\\r|:q\\r" vim -c "set backupcopy=no" notes.txt'
record vim-nowritebackup-w-existing "$existing" '$KEYS "Aadded by vim\\e|:w\\r|:q\\r" vim -c "set nowritebackup" notes.txt'
record nano-existing "$existing" '$KEYS "added by nano |^O|\\r|^X" nano notes.txt'
record nano-new "" '$KEYS "hello from nano|^O|\\r|^X" nano new.txt'
for format in pdf docx odt; do
    record libreoffice-convert-$format-new "" "soffice --headless --convert-to $format --outdir . \"\$SRC/notes.txt\""
    record libreoffice-convert-$format-overwrite "printf 'old\n' >notes.$format" \
        "soffice --headless --convert-to $format --outdir . \"\$SRC/notes.txt\""
done
