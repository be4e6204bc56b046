/**
 * Tools that only read devices and mounts (issue 35, an over-block): `df -h /dev/sda1`,
 * `lsblk /dev/sda`, `blkid`, `sfdisk -d /dev/sda`, `fdisk -l /dev/sda`. A device they are given
 * is read, never written (a read of a device is not a file read either), so it is not the
 * block-device write rule's. Their destructive forms are the partition rule's (rules/disk.ts).
 */
import type { Collector } from './collector.ts';
import { readAll } from './collector.ts';

/** Device readers by name, with the short options that take a value. */
export const DEVICE_READERS: Readonly<Record<string, Collector>> = {
  df: readAll({ shortValue: 'Btx', longValue: ['block-size', 'type', 'exclude-type'] }),
  lsblk: readAll({ shortValue: 'eIMoxEQ', longValue: ['exclude', 'include', 'output', 'sort', 'width'] }),
  blkid: readAll({
    shortValue: 'cosStLUnu',
    longValue: ['cache-file', 'output', 'match-tag', 'match-token', 'label', 'uuid'],
  }),
  findmnt: readAll({
    shortValue: 'FNotOSTdw',
    longValue: ['tab-file', 'output', 'types', 'options', 'source', 'target'],
  }),
  lsscsi: readAll({}),
  partx: readAll({ shortValue: 'notS', longValue: ['nr', 'output', 'type', 'sector-size'] }),
  dumpe2fs: readAll({ shortValue: 'ob' }),
  xfs_info: readAll({}),
  udevadm: readAll({ shortValue: 'qpnt', longValue: ['query', 'path', 'name', 'root'] }),
  fdisk: readAll({ shortValue: 'bcuLoxsSHCt' }),
  sfdisk: readAll({ shortValue: 'NoXYtw' }),
  gdisk: readAll({}),
  sgdisk: readAll({}),
  parted: readAll({}),
};
