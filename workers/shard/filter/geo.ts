/** Geographic predicates of filters. */

const EARTH_RADIUS_M = 6_371_008.8;
const rad = (deg: number): number => (deg * Math.PI) / 180;

/** Great-circle distance in meters (haversine). */
export function haversineMeters(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const dLat = rad(lat2 - lat1);
  const dLon = rad(lon2 - lon1);
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(rad(lat1)) * Math.cos(rad(lat2)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** Whether a point lies in the box; a box whose left edge is east of its right edge wraps the antimeridian. */
export function inBox(lat: number, lon: number, top: number, left: number, bottom: number, right: number): boolean {
  if (lat > top || lat < bottom) return false;
  return left <= right ? lon >= left && lon <= right : lon >= left || lon <= right;
}

/** Ray casting on a ring of [lat, lon] points (planar approximation, fine for city-sized shapes). */
export function inRing(lat: number, lon: number, ring: readonly { lat: number; lon: number }[]): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const a = ring[i]!;
    const b = ring[j]!;
    if (a.lat > lat !== b.lat > lat && lon < ((b.lon - a.lon) * (lat - a.lat)) / (b.lat - a.lat) + a.lon) inside = !inside;
  }
  return inside;
}
